import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WebRouter } from './router.js';

interface Asset { body: Buffer; contentType: string; version: string }

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The source folder of the assets: src/web/assets, found from both src/ (vitest) and dist/src/ (the build). */
function assetsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find the package root for src/web/assets');
    dir = up;
  }
  return path.join(dir, 'src', 'web', 'assets');
}

function load(file: string): Asset {
  const body = fs.readFileSync(file);
  return { body, contentType: TYPES[path.extname(file)] ?? 'application/octet-stream', version: crypto.createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

const require = createRequire(import.meta.url);
const ASSETS = new Map<string, Asset>();
const dir = assetsDir();
for (const name of fs.readdirSync(dir)) ASSETS.set(name, load(path.join(dir, name)));
// uPlot (the charts) is served from its npm package, as published.
for (const name of ['uPlot.iife.min.js', 'uPlot.min.css']) ASSETS.set(name, load(require.resolve(`uplot/dist/${name}`)));

/**
 * The URL of a static asset, with its content hash as `?v=`: a page always names the current version, so the
 * browser may cache that URL for a year and still never runs a stale script after an upgrade.
 */
export function assetUrl(name: string): string {
  const asset = ASSETS.get(name);
  if (!asset) throw new Error(`no such asset: ${name}`);
  return `/static/${name}?v=${asset.version}`;
}

/** GET /static/<name> for every asset: immutable for a year when asked for by the current version, else 1 h. */
export function registerAssets(router: WebRouter): void {
  for (const [name, asset] of ASSETS) {
    router.asset(`/static/${name}`, asset.body, asset.contentType,
      (query) => (new URLSearchParams(query).get('v') === asset.version ? 'public, max-age=31536000, immutable' : 'public, max-age=3600'));
  }
}
