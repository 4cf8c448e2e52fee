// Security headers of SPEC §4 on every kind of response, and the operations endpoints: /healthz, /readyz,
// /metrics (Prometheus text whose ingest counters move with real requests) and the 404 fallback.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const CSP = "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
const MAX_BODY = 1024;
const MAX_READINGS = 20;

let t: TestService;
let token: string;
beforeAll(async () => {
  t = await startTestService({ maxBodyBytes: MAX_BODY, maxReadingsPerRequest: MAX_READINGS });
  token = (await t.newDevice('factory', 'ops-owner@example.com')).token;
});
afterAll(async () => { await t?.close(); });

const auth = () => ({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' });
const post = (path: string, body: string, headers: Record<string, string> = auth()) =>
  fetch(t.baseUrl + path, { method: 'POST', headers, body });

/** The value of one sample in Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[3] ? m[3].split(',') : [];
    if (wanted.every((w) => have.includes(w)) && have.length === wanted.length) return Number(m[4]);
  }
  return undefined;
}
const scrape = async () => {
  const res = await fetch(`${t.baseUrl}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
};

describe('security headers on every response', () => {
  const cases: [string, number, () => Promise<Response>][] = [
    ['an accepted ingest (200)', 200, () => post(INGEST, '{"data":{"x":1}}')],
    ['a heartbeat (200)', 200, () => post('/api/webhooks/heartbeat', '')],
    ['invalid JSON (400)', 400, () => post(INGEST, '{')],
    ['no numeric metric (400)', 400, () => post(INGEST, '{"data":{"x":"y"}}')],
    ['a missing token (401)', 401, () => post(INGEST, '{"data":{"x":1}}', { 'Content-Type': 'application/json' })],
    ['an unknown token (401)', 401, () => post(INGEST, '{"data":{"x":1}}', { Authorization: `Bearer ${crypto.randomBytes(32).toString('hex')}` })],
    ['an unknown route (404)', 404, () => fetch(`${t.baseUrl}/no/such/route`)],
    ['a wrong method on a device route (405)', 405, () => fetch(t.baseUrl + INGEST)],
    ['a body over the size limit (413)', 413, () => post(INGEST, `{"data":{"x":1}}${' '.repeat(MAX_BODY)}`)],
    ['too many readings (413)', 413, () => post(INGEST, JSON.stringify({ data: Object.fromEntries(Array.from({ length: MAX_READINGS + 1 }, (_, i) => [`m${i}`, 1])) }))],
    ['/healthz', 200, () => fetch(`${t.baseUrl}/healthz`)],
    ['/readyz', 200, () => fetch(`${t.baseUrl}/readyz`)],
    ['/metrics', 200, () => fetch(`${t.baseUrl}/metrics`)],
  ];

  it.each(cases)('carries them on %s', async (_label, status, send) => {
    const res = await send();
    await res.arrayBuffer();
    expect(res.status).toBe(status);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    expect(res.headers.get('cache-control')).toBe('no-store');
    // Plain HTTP: HSTS is only sent over TLS.
    expect(res.headers.get('strict-transport-security')).toBeNull();
  });
});

describe('operations endpoints', () => {
  it('answers /healthz with 200', async () => {
    const res = await fetch(`${t.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 200 when the database is reachable and migrated and workers are up', async () => {
    const res = await fetch(`${t.baseUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ status: 'ready' });
  });

  it('answers an unknown route, whatever its method, with 404 JSON', async () => {
    for (const [method, path] of [['GET', '/nope'], ['POST', '/api/telemetry'], ['PUT', '/api/telemetry-ingest/x'], ['DELETE', '/healthz']]) {
      const res = await fetch(t.baseUrl + path, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toEqual({ error: 'No such route.' });
    }
  });

  it('answers another method on a device route with 405 and Allow: POST', async () => {
    for (const [method, path] of [['GET', INGEST], ['PUT', '/api/webhooks/heartbeat']]) {
      const res = await fetch(t.baseUrl + path, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toEqual({ error: 'Method not allowed on this route.' });
    }
  });

  it('serves Prometheus text with every ingest metric of SPEC §4.4', async () => {
    const res = await fetch(`${t.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const [name, type] of [
      ['ingest_requests_total', 'counter'], ['ingest_readings_total', 'counter'], ['ingest_batch_rows', 'histogram'],
      ['ingest_flush_seconds', 'histogram'], ['ingest_queue_rows', 'gauge'], ['device_token_cache_total', 'counter'],
      ['alerts_opened_total', 'counter'], ['database_errors_total', 'counter'],
    ]) {
      expect(text, name).toContain(`# TYPE ${name} ${type}\n`);
    }
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts requests by route and status, committed readings, batches and token cache results', async () => {
    const before = await scrape();
    const d = await t.newDevice('factory', 'ops-owner@example.com');
    const deviceAuth = { Authorization: `Bearer ${d.token}`, 'Content-Type': 'application/json' };
    await (await post(INGEST, '{"data":{"a":1,"b":2,"c":"skipped"}}', deviceAuth)).text(); // token cache miss
    await (await post(INGEST, '{"readings":[{"metric_name":"a","metric_value":3}]}', deviceAuth)).text(); // hit
    await (await post(INGEST, '{"data":{"a":"x"}}', deviceAuth)).text(); // 400
    await (await post(INGEST, '{}', { Authorization: 'Bearer nope' })).text(); // 401
    await (await post('/api/webhooks/heartbeat', '', deviceAuth)).text();
    const after = await scrape();

    const delta = (name: string, labels: Record<string, string> = {}) => (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    expect(delta('ingest_requests_total', { route: 'telemetry', status: '200' })).toBe(2);
    expect(delta('ingest_requests_total', { route: 'telemetry', status: '400' })).toBe(1);
    expect(delta('ingest_requests_total', { route: 'telemetry', status: '401' })).toBe(1);
    expect(delta('ingest_requests_total', { route: 'heartbeat', status: '200' })).toBe(1);
    expect(delta('ingest_readings_total')).toBe(3);
    expect(delta('device_token_cache_total', { result: 'miss' })).toBe(1);
    expect(delta('device_token_cache_total', { result: 'hit' })).toBe(3);
    // Three accepted requests, each in a batch of its own or shared: 3 readings + 3 module events in all.
    expect(delta('ingest_batch_rows_sum')).toBe(6);
    expect(delta('ingest_batch_rows_count')).toBeGreaterThanOrEqual(1);
    expect(delta('ingest_flush_seconds_count')).toBe(delta('ingest_batch_rows_count'));
    expect(sample(after, 'ingest_queue_rows')).toBe(0);
    const stored = await t.db.query('SELECT count(*)::int AS n FROM telemetry WHERE device_id = $1', [d.id]);
    expect(stored.rows[0].n).toBe(3);
  });
});
