// Graceful shutdown (SPEC §4.4): stop taking connections, commit and answer what was accepted, then exit.
// In process through service.close(), and as a real child process sent SIGTERM; plus configuration errors.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createTestDatabase } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const MAIN = path.resolve('dist/src/main.js');

async function queueRows(baseUrl: string): Promise<number> {
  const m = /^ingest_queue_rows (\d+)/m.exec(await (await fetch(`${baseUrl}/metrics`)).text());
  return m ? Number(m[1]) : -1;
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** One reading with a unique marker value; resolves to the status, or 0 when the connection failed. */
async function postMarker(baseUrl: string, token: string, marker: number): Promise<number> {
  try {
    const res = await fetch(baseUrl + INGEST, {
      method: 'POST', body: JSON.stringify({ data: { marker } }),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
    await res.text();
    return res.status;
  } catch {
    return 0;
  }
}

/** A POST over a given keep-alive agent, so it can reuse a connection opened before shutdown began. */
function postOver(agent: http.Agent, baseUrl: string, token: string, marker: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = http.request(baseUrl + INGEST, { method: 'POST', agent, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c) => { body += c; }).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end(JSON.stringify({ data: { marker } }));
  });
}

async function storedMarkers(db: pg.Pool | pg.Client, markers: number[]): Promise<number[]> {
  const r = await db.query(`SELECT metric_value FROM telemetry WHERE metric_name = 'marker' AND metric_value = ANY($1) ORDER BY 1`, [markers]);
  return r.rows.map((row) => row.metric_value);
}

describe('service.close() with requests in flight', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService({ ingestWorkers: 2, batchMaxRows: 10_000, batchMaxWaitMs: 400 }); });
  afterAll(async () => { await t?.close(); });

  it('commits and answers 200 to every queued request, and stores nothing it did not answer 200', async () => {
    const owner = `shutdown-${Date.now()}@example.com`;
    const first = await t.newDevice('worker', owner);
    const devices = [first, ...await Promise.all([1, 2, 3].map(() => t.newDevice('worker', owner)))];
    // A connection that is open and idle before shutdown: a request on it after close() reaches the handler.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    await new Promise<void>((resolve) => http.get(`${t.baseUrl}/healthz`, { agent }, (res) => res.resume().on('end', resolve)));

    const burst = Array.from({ length: 30 }, (_, i) => 1000 + i);
    const answers = burst.map((m, i) => postMarker(t.baseUrl, devices[i % devices.length].token, m));
    await waitUntil('the burst to be queued', async () => (await queueRows(t.baseUrl)) === burst.length * 2);

    const closing = t.service.close();
    const late = [2000, 2001, 2002];
    const lateAnswers = [
      postOver(agent, t.baseUrl, devices[0].token, late[0]).then((r) => r.status),
      postMarker(t.baseUrl, devices[1].token, late[1]),
      postMarker(t.baseUrl, devices[2].token, late[2]),
    ];
    await closing;
    const statuses = await Promise.all(answers);
    const lateStatuses = await Promise.all(lateAnswers);
    agent.destroy();

    expect(statuses).toEqual(burst.map(() => 200));
    expect(await storedMarkers(t.db, burst)).toEqual(burst);
    // After close() began: refused (0) or an error, never a 200 without its row.
    const lateStored = await storedMarkers(t.db, late);
    late.forEach((m, i) => expect(lateStatuses[i] === 200).toBe(lateStored.includes(m)));
    expect(lateStatuses[0]).toBe(503);
    for (const s of lateStatuses.slice(1)) expect([0, 503]).toContain(s);
    expect(lateStored).toEqual([]);
    // A new connection is refused: the listening socket is closed.
    const fresh = await new Promise<string>((resolve) => {
      http.get(`${t.baseUrl}/healthz`, { agent: false }, (res) => { res.resume(); resolve(`status ${res.statusCode}`); })
        .on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(fresh).toBe('ECONNREFUSED');
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** `node dist/src/main.js` with only the given environment (never an embedded database by accident). */
function startMain(env: Record<string, string>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'telemetry-main-'));
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
  child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    resolve(code);
  }));
  return { child, exited, output: () => ({ stderr, stdout }) };
}

async function exitWithin<T>(exited: Promise<T>, child: { kill(): boolean }, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => { timer = setTimeout(() => { child.kill(); r('timeout'); }, ms); });
  try { return await Promise.race([exited, timeout]); } finally { clearTimeout(timer); }
}

describe('the service as a process', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => { database = await createTestDatabase(); });
  afterAll(async () => { await database?.drop(); });

  it('on SIGTERM commits the readings in flight, answers them 200 and exits 0', async () => {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const main = startMain({
      DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn',
      ADMIN_EMAIL: 'ops@example.com', ADMIN_PASSWORD: 'correct horse battery staple', BATCH_MAX_WAIT_MS: '400', INGEST_WORKERS: '2',
    });
    const db = new pg.Client({ connectionString: database.url });
    try {
      await waitUntil('/readyz', async () => (await fetch(`${baseUrl}/readyz`)).status === 200, 30_000);
      await db.connect();
      const admin = await db.query(`SELECT id FROM users WHERE email = 'ops@example.com' AND role = 'admin'`);
      expect(admin.rows).toHaveLength(1);
      const device = await createDevice(db as unknown as pg.Pool, admin.rows[0].id, 'sigterm', 'fleet');

      const burst = Array.from({ length: 20 }, (_, i) => 5000 + i);
      const answers = burst.map((m) => postMarker(baseUrl, device.token, m));
      await waitUntil('the burst to be queued', async () => (await queueRows(baseUrl)) === burst.length * 2);
      main.child.kill('SIGTERM');

      expect(await exitWithin(main.exited, main.child, 15_000)).toBe(0);
      expect(await Promise.all(answers)).toEqual(burst.map(() => 200));
      expect(await storedMarkers(db, burst)).toEqual(burst);
      expect(main.output().stderr).not.toMatch(/error/i);
    } finally {
      main.child.kill('SIGKILL');
      await db.end().catch(() => {});
    }
  });

  it.each([
    ['PORT', 'abc', /PORT must be a whole number from 0 to 65535/],
    ['PORT', '65536', /PORT must be from 0 to 65535/],
    ['BATCH_MAX_ROWS', '0', /BATCH_MAX_ROWS must be from 1 to 1000000/],
  ])('refuses to start with %s=%s, naming the variable and its range on stderr', async (name, value, message) => {
    const main = startMain({ DATABASE_URL: database.url, HOST: '127.0.0.1', LOG_LEVEL: 'warn', PORT: '0', [name]: value });
    const code = await exitWithin(main.exited, main.child, 15_000);
    expect(code).not.toBe('timeout');
    expect(code).not.toBe(0);
    expect(main.output().stderr).toMatch(message);
  });
});
