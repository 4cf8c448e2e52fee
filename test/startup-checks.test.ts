import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

const MAIN = new URL('../dist/src/main.js', import.meta.url).pathname;

describe('startup refuses the slow pure-JS uWS fallback', () => {
  it('exits non-zero with a message saying how to install the official build', async () => {
    const db = await createTestDatabase();
    try {
      // The unofficial package loads its JS fallback when told to (or when the binary fails to load).
      const r = spawnSync(process.execPath, [MAIN], {
        env: { ...process.env, UWS_USE_FALLBACK: '1', DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
        encoding: 'utf8', timeout: 30_000,
      });
      expect(r.status).toBe(3);
      expect(r.stderr).toMatch(/did not load its native binary/);
      expect(r.stderr).toMatch(/npm install uWebSockets\.js@uNetworking\/uWebSockets\.js#v/);
    } finally {
      await db.drop();
    }
  });
});

describe('the negative token cache', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService(); });
  afterAll(async () => { await t?.close(); });

  const misses = async () => {
    const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
    return Number(/device_token_cache_total\{result="miss"\} (\d+)/.exec(text)?.[1] ?? 0);
  };

  it('asks the database once for a flood of the same wrong token', async () => {
    const before = await misses();
    const wrong = 'ab'.repeat(32);
    const answers = [];
    for (let i = 0; i < 50; i++) answers.push((await t.post('/api/telemetry-ingest', { data: { x: 1 } }, wrong)).status);
    expect(new Set(answers)).toEqual(new Set([401]));
    expect(await misses()).toBe(before + 1);
  });
});

describe('the embedded PostgreSQL port', () => {
  it('refuses to attach to a server that is not the embedded one of DATA_DIR', async () => {
    const stranger = net.createServer((socket) => socket.destroy());
    await new Promise<void>((r) => stranger.listen(0, '127.0.0.1', r));
    const port = (stranger.address() as net.AddressInfo).port;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stranger-'));
    try {
      const { DATABASE_URL: _unset, ...env } = process.env;
      const child = spawn(process.execPath, [MAIN], {
        env: { ...env, DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(port), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => { out += d; });
      child.stderr.on('data', (d) => { out += d; });
      const code = await new Promise<number | null>((r) => child.on('close', r));
      expect(code).toBe(1);
      expect(out).toMatch(new RegExp(`Port ${port} \\(EMBEDDED_PG_PORT\\) is taken by another server`));
    } finally {
      stranger.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
