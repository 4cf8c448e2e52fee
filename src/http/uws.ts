import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, WebSocket } from 'uWebSockets.js';

export class UwsFallbackError extends Error {}

const INSTALL_HINT =
  'uWebSockets.js did not load its native binary, and its pure-JS fallback is far too slow to serve a fleet. ' +
  'Use Node.js 20 on Linux x64/arm64, macOS or Windows x64 with glibc, or install the official build: ' +
  'npm install uWebSockets.js@uNetworking/uWebSockets.js#v20.52.0 (from the authors\' GitHub releases).';

/**
 * Loads uWebSockets.js and refuses the unofficial package's silent fallback to a JS server:
 * the native App is a function implemented in C++, the fallback's is plain JavaScript.
 */
export function loadUws(): typeof UWS {
  const require = createRequire(import.meta.url);
  const originalWarn = console.warn;
  const warnings: string[] = [];
  // The package announces its fallback with console.warn; capture it to report it in our own error.
  console.warn = (...args: unknown[]) => { warnings.push(args.map(String).join(' ')); };
  let uws: typeof UWS;
  try {
    uws = require('uWebSockets.js') as typeof UWS;
  } finally {
    console.warn = originalWarn;
  }
  const native = typeof uws.App === 'function' && /\[native code\]/.test(Function.prototype.toString.call(uws.App));
  if (!native) {
    throw new UwsFallbackError(`${INSTALL_HINT}${warnings.length ? `\nLoader said: ${warnings.join(' ').trim()}` : ''}`);
  }
  return uws;
}
