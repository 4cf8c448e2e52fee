// The size and rate limits of POST /api/telemetry-ingest over real HTTP: 413 for a body over
// MAX_BODY_BYTES (with and without Content-Length) and 429 with Retry-After over DEVICE_RATE_LIMIT.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const LIMIT = 256;

/** A valid flat body of exactly `bytes` bytes: JSON allows trailing whitespace. */
function bodyOf(bytes: number, value = 1): string {
  const json = JSON.stringify({ data: { level: value } });
  if (json.length > bytes) throw new Error('too small');
  return json + ' '.repeat(bytes - json.length);
}

/** A request through node:http, written in chunks with Transfer-Encoding: chunked (so no Content-Length). */
function chunkedPost(baseUrl: string, token: string, chunks: string[]): Promise<{ status: number; headers: http.IncomingHttpHeaders; json: any }> {
  return new Promise((resolve, reject) => {
    const url = new URL(INGEST, baseUrl);
    const req = http.request({
      host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false,
      headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', Authorization: `Bearer ${token}` },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, json: JSON.parse(text) }));
      res.on('error', reject);
    });
    // The server may answer 413 and close before the last chunk: a write error then is expected.
    req.on('error', (err) => { if (!req.writableEnded) reject(err); });
    void (async () => {
      for (const c of chunks) {
        if (req.destroyed) return;
        req.write(c);
        await new Promise((r) => setTimeout(r, 15));
      }
      req.end();
    })();
  });
}

async function countRows(t: TestService, deviceId: number) {
  const r = await t.db.query(
    `SELECT (SELECT count(*)::int FROM telemetry WHERE device_id = $1) AS telemetry,
            (SELECT count(*)::int FROM module_events WHERE device_id = $1) AS events`, [deviceId]);
  return r.rows[0] as { telemetry: number; events: number };
}

describe('413 for a body over MAX_BODY_BYTES', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService({ maxBodyBytes: LIMIT }); });
  afterAll(async () => { await t?.close(); });
  const device = () => t.newDevice('factory', 'limits-owner@example.com');

  it('accepts a body of limit - 1 and of exactly limit bytes', async () => {
    const d = await device();
    for (const [bytes, value] of [[LIMIT - 1, 1], [LIMIT, 2]]) {
      const body = bodyOf(bytes, value);
      expect(Buffer.byteLength(body)).toBe(bytes);
      const r = await t.post(INGEST, body, d.token);
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ ok: true, status: 'ok', inserted: 1, skipped: 0, device_id: d.id });
    }
    const rows = await t.db.query('SELECT metric_value FROM telemetry WHERE device_id = $1 ORDER BY metric_value', [d.id]);
    expect(rows.rows).toEqual([{ metric_value: 1 }, { metric_value: 2 }]);
  });

  it('refuses limit + 1 bytes with 413 on a device\'s first request (token not yet cached), storing nothing', async () => {
    const d = await device();
    const r = await t.post(INGEST, bodyOf(LIMIT + 1), d.token);
    expect(r.status).toBe(413);
    expect(r.json).toEqual({ error: `Body is larger than ${LIMIT} bytes; split the readings over several requests.` });
    expect(await countRows(t, d.id)).toEqual({ telemetry: 0, events: 0 });
  });

  it('refuses limit + 1 bytes with 413 for a known device (token cached), storing nothing more', async () => {
    const d = await device();
    expect((await t.post(INGEST, bodyOf(LIMIT), d.token)).status).toBe(200);
    const r = await t.post(INGEST, bodyOf(LIMIT + 1, 5), d.token);
    expect(r.status).toBe(413);
    expect(r.json.error).toContain(`larger than ${LIMIT} bytes`);
    expect(await countRows(t, d.id)).toEqual({ telemetry: 1, events: 2 }); // the first request's 'telemetry' and 'online'
  });

  it('counts the bytes of a chunked request without Content-Length and refuses it past the limit', async () => {
    const d = await device();
    // Four chunks of 100 bytes: each alone is under the limit, together they are over it.
    const body = bodyOf(400);
    const chunks = [0, 100, 200, 300].map((i) => body.slice(i, i + 100));
    const r = await chunkedPost(t.baseUrl, d.token, chunks);
    expect(r.status).toBe(413);
    expect(r.json.error).toContain(`larger than ${LIMIT} bytes`);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(await countRows(t, d.id)).toEqual({ telemetry: 0, events: 0 });
  });

  it('accepts a chunked request of exactly limit bytes and stores its reading', async () => {
    const d = await device();
    const body = bodyOf(LIMIT, 7);
    const r = await chunkedPost(t.baseUrl, d.token, [body.slice(0, 10), body.slice(10, 100), body.slice(100)]);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, status: 'ok', inserted: 1, skipped: 0, device_id: d.id });
    const rows = await t.db.query('SELECT metric_name, metric_value FROM telemetry WHERE device_id = $1', [d.id]);
    expect(rows.rows).toEqual([{ metric_name: 'level', metric_value: 7 }]);
  });

  it('refuses a chunked request of limit + 1 bytes', async () => {
    const d = await device();
    const body = bodyOf(LIMIT + 1);
    const r = await chunkedPost(t.baseUrl, d.token, [body.slice(0, 200), body.slice(200)]);
    expect(r.status).toBe(413);
    expect(await countRows(t, d.id)).toEqual({ telemetry: 0, events: 0 });
  });
});

describe('429 over DEVICE_RATE_LIMIT', () => {
  let t: TestService;
  // The clock is pinned, so every request below falls in the same one-second window until it is moved.
  let clock = Date.UTC(2026, 0, 15, 12, 0, 0);
  beforeAll(async () => { t = await startTestService({ deviceRateLimit: 3 }, { now: () => clock }); });
  afterAll(async () => { await t?.close(); });

  it('accepts 3 requests in one second, answers the 4th 429 with Retry-After and stores nothing of it', async () => {
    const d = await t.newDevice('fleet', 'rate-owner@example.com');
    for (let i = 1; i <= 3; i++) {
      const r = await t.post(INGEST, { data: { n: i } }, d.token);
      expect(r.status, `request ${i}`).toBe(200);
    }
    const r = await t.post(INGEST, { data: { n: 4 } }, d.token);
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(Object.keys(r.json)).toEqual(['error']);
    expect(r.json.error).toContain('Retry-After');
    const rows = await t.db.query('SELECT metric_value FROM telemetry WHERE device_id = $1 ORDER BY metric_value', [d.id]);
    expect(rows.rows.map((x) => x.metric_value)).toEqual([1, 2, 3]);
    expect(await countRows(t, d.id)).toEqual({ telemetry: 3, events: 4 }); // 3 telemetry events + 1 'online'

    // Another device is not limited by this one, and the next second lets the first one through again.
    const other = await t.newDevice('fleet', 'rate-owner@example.com');
    expect((await t.post(INGEST, { data: { n: 1 } }, other.token)).status).toBe(200);
    clock += 1000;
    expect((await t.post(INGEST, { data: { n: 5 } }, d.token)).status).toBe(200);
  });

  it('limits heartbeats of a device too', async () => {
    clock += 1000;
    const d = await t.newDevice('fleet', 'rate-owner@example.com');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.post('/api/webhooks/heartbeat', '', d.token)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});
