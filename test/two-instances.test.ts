// Two service instances on loopback against one database, as behind a load balancer: a credential revoked
// through one is refused by the other at once (device tokens through LISTEN/NOTIFY, mobile tokens because
// every request reads the database), and both write the same devices without deadlock or loss.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteDevice, rotateDeviceToken } from '../dist/src/auth/device-registry.js';
import { startTestService, type TestService } from './support/service.js';

const HEARTBEAT = '/api/webhooks/heartbeat';
const INGEST = '/api/telemetry-ingest';
const OWNER = 'two-instances@example.com';
const PASSWORD = 'correct horse battery'; // the password newDevice gives its owners
const REVOCATION_DEADLINE_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** B's device-token cache counter for "hit" or "miss", from its own /metrics. */
async function cacheCount(t: TestService, result: 'hit' | 'miss'): Promise<number> {
  const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
  return Number(new RegExp(`^device_token_cache_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

/**
 * Sends heartbeats with `token` to `t` until one is refused by a fresh database look-up (a cache miss), which
 * shows the instance dropped the token from its cache; at most `deadlineMs`. Returns every status and the time.
 */
async function pollUntilEvicted(t: TestService, token: string, missesBefore: number, deadlineMs: number) {
  const started = performance.now();
  const statuses: number[] = [];
  let evicted = false;
  while (!evicted && performance.now() - started < deadlineMs) {
    statuses.push((await t.post(HEARTBEAT, null, token)).status);
    evicted = (await cacheCount(t, 'miss')) > missesBefore;
    if (!evicted) await sleep(10);
  }
  return { statuses, evicted, elapsedMs: performance.now() - started };
}

describe('two instances on one database', () => {
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    a = await startTestService({ batchMaxWaitMs: 2 });
    b = await startTestService({ batchMaxWaitMs: 2 }, { databaseUrl: a.databaseUrl });
  });
  // B only borrows A's database; A owns it and drops it, so B must stop first.
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** A device whose token instance B has answered from its cache, with B's miss count after that. */
  async function deviceCachedOnB() {
    const device = await a.newDevice('fleet', OWNER);
    expect((await b.post(HEARTBEAT, null, device.token)).status).toBe(200);
    const hits = await cacheCount(b, 'hit');
    expect((await b.post(HEARTBEAT, null, device.token)).status).toBe(200);
    expect(await cacheCount(b, 'hit'), 'the second heartbeat is answered from B\'s cache').toBe(hits + 1);
    return { device, misses: await cacheCount(b, 'miss') };
  }
  const heartbeats = async (deviceId: number) => (await a.db.query(
    `SELECT count(*)::int AS n FROM module_events WHERE device_id = $1 AND event_type = 'heartbeat'`, [deviceId])).rows[0].n as number;

  it('refuses on B, within one second, a device token that B had cached and that was rotated through A', async () => {
    const { device, misses } = await deviceCachedOnB();
    const rotated = await rotateDeviceToken(a.db, device.id);
    const poll = await pollUntilEvicted(b, device.token, misses, REVOCATION_DEADLINE_MS);
    expect(poll.evicted, `B still held the old token after ${Math.round(poll.elapsedMs)} ms`).toBe(true);
    expect(poll.elapsedMs).toBeLessThan(REVOCATION_DEADLINE_MS);
    expect(poll.statuses.every((s) => s === 401), `old token answers: ${poll.statuses}`).toBe(true);

    const fresh = await b.post(HEARTBEAT, null, rotated.token);
    expect(fresh.status).toBe(200);
    expect(fresh.json).toEqual({ ok: true, status: 'ok', device_id: device.id });
    expect(await heartbeats(device.id)).toBe(3); // two before the rotation, one with the new token
  });

  it('refuses on B, within one second, the token of a device that B had cached and that was deleted through A', async () => {
    const { device, misses } = await deviceCachedOnB();
    await deleteDevice(a.db, device.id);
    const poll = await pollUntilEvicted(b, device.token, misses, REVOCATION_DEADLINE_MS);
    expect(poll.evicted, `B still held the deleted device's token after ${Math.round(poll.elapsedMs)} ms`).toBe(true);
    expect(poll.elapsedMs).toBeLessThan(REVOCATION_DEADLINE_MS);
    expect(poll.statuses.every((s) => s === 401), `deleted device answers: ${poll.statuses}`).toBe(true);
    const after = await b.post(INGEST, { data: { speed: 1 } }, device.token);
    expect(after.status).toBe(401);
    expect(after.json).toEqual({ error: 'Invalid device token.' });
    expect(await heartbeats(device.id)).toBe(2);
    expect((await a.db.query('SELECT count(*)::int AS n FROM telemetry WHERE device_id = $1', [device.id])).rows[0].n).toBe(0);
  });

  it('refuses on B at once a mobile token that was logged out on A', async () => {
    await a.newDevice('fleet', OWNER); // makes sure the owner exists
    const login = await a.post('/api/mobile/login', { email: OWNER, password: PASSWORD });
    expect(login.status).toBe(200);
    const token = login.json.data.token as string;
    const devicesOnB = () => fetch(`${b.baseUrl}/api/mobile/devices`, { headers: { Authorization: `Bearer ${token}` } });
    expect((await devicesOnB()).status).toBe(200);

    expect((await a.post('/api/mobile/logout', {}, token)).status).toBe(200);
    const after = await devicesOnB();
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ status: 'error', error: 'Invalid or expired access token.' });
  });

  it('stores exactly once every reading sent to A and B concurrently for the same devices', async () => {
    const devices = [];
    for (let i = 0; i < 3; i++) devices.push(await a.newDevice('fleet', OWNER)); // the first may create the owner
    const metrics = ['speed', 'rpm', 'fuel', 'temperature'];
    const base = Date.UTC(2025, 0, 1);
    // 240 requests of 1 to 5 readings, each reading at its own second per device, so every row is distinct.
    const jobs = Array.from({ length: 240 }, (_, i) => {
      const device = devices[i % devices.length];
      const readings = Array.from({ length: 1 + (i % 5) }, (_, k) => ({
        metric_name: metrics[(i + k) % metrics.length], metric_value: i * 10 + k,
        recorded_at: new Date(base + (i * 10 + k) * 1000).toISOString(),
      }));
      return { device, readings };
    });
    const answers: { status: number; inserted: number; deviceId: number }[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: 24 }, async (_, c) => {
      const t = c % 2 === 0 ? a : b;
      while (next < jobs.length) {
        const job = jobs[next++];
        const r = await t.post(INGEST, { readings: job.readings }, job.device.token);
        answers.push({ status: r.status, inserted: r.json?.inserted ?? 0, deviceId: job.device.id });
      }
    }));
    expect(answers.filter((x) => x.status !== 200)).toEqual([]);
    const sent = jobs.reduce((n, j) => n + j.readings.length, 0);
    expect(answers.reduce((n, x) => n + x.inserted, 0)).toBe(sent);

    const ids = devices.map((d) => d.id);
    const stored = await a.db.query(
      `SELECT device_id::int AS d, metric_name AS m, metric_value AS v, time FROM telemetry WHERE device_id = ANY($1)`, [ids]);
    expect(stored.rows.length).toBe(sent);
    const key = (d: number, m: string, v: number, time: string) => `${d}/${m}/${v}/${time}`;
    expect(stored.rows.map((r) => key(r.d, r.m, r.v, r.time.toISOString())).sort()).toEqual(
      jobs.flatMap((j) => j.readings.map((r) => key(j.device.id, r.metric_name, r.metric_value, r.recorded_at))).sort());
    const events = await a.db.query(
      `SELECT count(*)::int AS n FROM module_events WHERE device_id = ANY($1) AND event_type = 'telemetry'`, [ids]);
    expect(events.rows[0].n).toBe(jobs.length);
  });
});
