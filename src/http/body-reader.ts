import type { HttpResponse } from './uws.js';

const copyChunk = (chunk: ArrayBuffer): Buffer => Buffer.copyBytesFrom(new Uint8Array(chunk));

export type BodyResult = { ok: true; body: Buffer } | { ok: false; tooLarge: true };

/**
 * Streams a request body into memory with a cap, counting bytes as they arrive: a chunked request has no
 * Content-Length to trust. uWS reuses each chunk's memory after the callback, so every chunk is copied.
 * Must be called synchronously inside the route handler, before any await.
 */
export function readBody(res: HttpResponse, maxBytes: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > maxBytes) {
        done = true;
        resolve({ ok: false, tooLarge: true });
        return;
      }
      if (isLast) {
        done = true;
        if (chunks.length === 0) {
          resolve({ ok: true, body: copyChunk(chunk) });
        } else {
          chunks.push(copyChunk(chunk));
          resolve({ ok: true, body: Buffer.concat(chunks, size) });
        }
        return;
      }
      chunks.push(copyChunk(chunk));
    });
  });
}
