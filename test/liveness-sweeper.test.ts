// Device liveness (SPEC §4.1): the offline sweeper against a real PostgreSQL and real services, with an
// injectable clock so that time passes without waiting. Every test leaves its devices offline or deleted, so
// the number a sweep returns counts only the devices of the test that runs it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteDevice } from '../dist/src/auth/device-registry.js';
import { OfflineSweeper } from '../dist/src/liveness/sweeper.js';
import { createLogger } from '../dist/src/observability/logger.js';
import { SWEEPER_LOCK_KEY } from '../dist/src/store/queries.js';
import { waitFor } from './support/wait.js';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const HEARTBEAT = '/api/webhooks/heartbeat';
const OWNER = 'liveness@example.com';
const DEFAULT_TIMEOUT_MS = 300_000; // OFFLINE_AFTER_S left at its default
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const iso = (ms: number) => new Date(ms).toISOString();

// A whole second plus 123 ms, so that a sweep which lost the milliseconds would fail the boundary tests.
let clock = Math.floor(Date.now() / 1000) * 1000 + 123;
const now = () => clock;

async function deviceState(t: TestService, id: number) {
  const { rows } = await t.db.query('SELECT status, last_seen_at FROM devices WHERE id = $1', [id]);
  return { status: rows[0].status as string, lastSeenMs: (rows[0].last_seen_at as Date | null)?.getTime() ?? null };
}

async function events(t: TestService, id: number, type: string) {
  const { rows } = await t.db.query(
    'SELECT time, module, readings, detail FROM module_events WHERE device_id = $1 AND event_type = $2 ORDER BY time', [id, type]);
  return rows.map((r) => ({ timeMs: (r.time as Date).getTime(), module: r.module, readings: r.readings, detail: r.detail }));
}

/** One sweep on `t` with the clock at `ms`. */
async function sweepAt(t: TestService, ms: number) {
  clock = ms;
  return t.service.sweepOnce!();
}

describe('offline sweeper on one instance', () => {
  let t: TestService;
  // No periodic sweep during these tests: each sweep is the test's own, at the time the test sets.
  beforeAll(async () => { t = await startTestService({ sweepIntervalMs: 3_600_000 }, { now }); });
  afterAll(async () => { await t?.close(); });

  it('marks a silent device offline once more than OFFLINE_AFTER_S have passed, not a millisecond before, with one offline event', async () => {
    const device = await t.newDevice('vehicle', OWNER);
    const seenAt = clock;
    expect((await t.post(INGEST, { data: { speed_kmh: 42 } }, device.token)).status).toBe(200);
    expect(await deviceState(t, device.id)).toEqual({ status: 'online', lastSeenMs: seenAt });
    expect((await events(t, device.id, 'online')).map((e) => e.timeMs)).toEqual([seenAt]);

    expect(await sweepAt(t, seenAt + DEFAULT_TIMEOUT_MS - 1)).toBe(0);
    expect((await deviceState(t, device.id)).status).toBe('online');
    expect(await sweepAt(t, seenAt + DEFAULT_TIMEOUT_MS)).toBe(0);
    expect((await deviceState(t, device.id)).status).toBe('online');
    expect(await events(t, device.id, 'offline')).toEqual([]);

    expect(await sweepAt(t, seenAt + DEFAULT_TIMEOUT_MS + 1)).toBe(1);
    expect(await deviceState(t, device.id)).toEqual({ status: 'offline', lastSeenMs: seenAt });
    expect(await events(t, device.id, 'offline')).toEqual([{
      timeMs: seenAt + DEFAULT_TIMEOUT_MS + 1, module: 'vehicle', readings: 0,
      detail: { last_seen_at: iso(seenAt), offline_after_s: 300 },
    }]);

    expect(await sweepAt(t, seenAt + 2 * DEFAULT_TIMEOUT_MS)).toBe(0);
    expect(await events(t, device.id, 'offline'), 'an offline device is not marked again').toHaveLength(1);
  });

  it('honours a per-device offline_after_s, shorter or longer than the default, to the millisecond', async () => {
    const short = await t.newDevice('health', OWNER);
    const plain = await t.newDevice('health', OWNER);
    const long = await t.newDevice('factory', OWNER);
    await t.db.query('UPDATE devices SET offline_after_s = $2 WHERE id = $1', [short.id, 10]);
    await t.db.query('UPDATE devices SET offline_after_s = $2 WHERE id = $1', [long.id, 600]);
    clock += 1000;
    const seenAt = clock;
    for (const d of [short, plain, long]) expect((await t.post(HEARTBEAT, null, d.token)).status).toBe(200);
    const statuses = async () => Promise.all([short, plain, long].map(async (d) => (await deviceState(t, d.id)).status));

    expect(await sweepAt(t, seenAt + 9_999)).toBe(0);
    expect(await sweepAt(t, seenAt + 10_000)).toBe(0);
    expect(await statuses()).toEqual(['online', 'online', 'online']);
    expect(await sweepAt(t, seenAt + 10_001)).toBe(1);
    expect(await statuses()).toEqual(['offline', 'online', 'online']);
    expect((await events(t, short.id, 'offline'))[0].detail).toEqual({ last_seen_at: iso(seenAt), offline_after_s: 10 });

    expect(await sweepAt(t, seenAt + DEFAULT_TIMEOUT_MS + 1)).toBe(1);
    expect(await statuses()).toEqual(['offline', 'offline', 'online']);
    expect(await sweepAt(t, seenAt + 599_999)).toBe(0);
    expect(await sweepAt(t, seenAt + 600_000)).toBe(0);
    expect(await statuses()).toEqual(['offline', 'offline', 'online']);
    expect(await sweepAt(t, seenAt + 600_001)).toBe(1);
    expect(await statuses()).toEqual(['offline', 'offline', 'offline']);
    expect((await events(t, long.id, 'offline'))[0]).toMatchObject({ timeMs: seenAt + 600_001, module: 'factory', detail: { offline_after_s: 600 } });
  });

  for (const [route, path, body] of [['ingest', INGEST, { data: { temperature_c: 21.5 } }], ['heartbeat', HEARTBEAT, null]] as const) {
    it(`brings an offline device back online on its next ${route}, with an online event, and times it out again from then`, async () => {
      const device = await t.newDevice('home_infra', OWNER);
      clock += 1000;
      const firstSeen = clock;
      expect((await t.post(path, body, device.token)).status).toBe(200);
      expect(await sweepAt(t, firstSeen + DEFAULT_TIMEOUT_MS + 1)).toBe(1);
      expect((await deviceState(t, device.id)).status).toBe('offline');

      clock += 5_000;
      const back = clock;
      const res = await t.post(path, body, device.token);
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ ok: true, status: 'ok', device_id: device.id });
      expect(await deviceState(t, device.id)).toEqual({ status: 'online', lastSeenMs: back });
      expect((await events(t, device.id, 'online')).map((e) => e.timeMs)).toEqual([firstSeen, back]);
      expect((await events(t, device.id, 'online'))[1]).toMatchObject({ module: 'home_infra', readings: 0 });
      const type = route === 'ingest' ? 'telemetry' : 'heartbeat';
      expect((await events(t, device.id, type)).map((e) => e.timeMs)).toEqual([firstSeen, back]);

      expect(await sweepAt(t, back + DEFAULT_TIMEOUT_MS)).toBe(0);
      expect(await sweepAt(t, back + DEFAULT_TIMEOUT_MS + 1)).toBe(1);
      expect((await events(t, device.id, 'offline')).map((e) => e.timeMs))
        .toEqual([firstSeen + DEFAULT_TIMEOUT_MS + 1, back + DEFAULT_TIMEOUT_MS + 1]);
    });
  }

  it('marks a whole silent fleet offline in one sweep, 5,000 devices a transaction, each once with one event', async () => {
    const owner = (await t.db.query("INSERT INTO users (email, password_hash, role) VALUES ('fleet-sweep@example.com', 'x', 'user') RETURNING id")).rows[0].id;
    const seen = iso(clock - 10 * 3_600_000);
    const ids = (await t.db.query(`INSERT INTO devices (owner_id, name, module, api_token_hash, status, last_seen_at)
      SELECT $1, 'bulk-' || g, 'home_infra', md5(g::text || 'sweep') || md5(g::text), 'online', $2 FROM generate_series(1, 5001) g RETURNING id`,
    [owner, seen])).rows.map((r) => r.id);
    expect(await sweepAt(t, clock)).toBeGreaterThanOrEqual(5001);
    const after = await t.db.query("SELECT count(*) FILTER (WHERE status = 'offline')::int AS offline FROM devices WHERE id = ANY($1::int8[])", [ids]);
    expect(after.rows[0].offline).toBe(5001);
    const ev = await t.db.query("SELECT count(*)::int AS n, count(DISTINCT device_id)::int AS d FROM module_events WHERE event_type = 'offline' AND device_id = ANY($1::int8[])", [ids]);
    expect(ev.rows[0]).toEqual({ n: 5001, d: 5001 });
  });

  it('ignores deleted devices and devices that were never seen', async () => {
    const deleted = await t.newDevice('worker', OWNER);
    const unseen = await t.newDevice('worker', OWNER);
    clock += 1000;
    expect((await t.post(HEARTBEAT, null, deleted.token)).status).toBe(200);
    await deleteDevice(t.db, deleted.id);

    expect(await sweepAt(t, clock + 10 * DEFAULT_TIMEOUT_MS)).toBe(0);
    expect((await deviceState(t, deleted.id)).status, 'a deleted device keeps its last status').toBe('online');
    expect(await deviceState(t, unseen.id)).toEqual({ status: 'offline', lastSeenMs: null });
    expect(await events(t, deleted.id, 'offline')).toEqual([]);
    expect(await events(t, unseen.id, 'offline')).toEqual([]);
  });
});

describe('offline sweeper with two instances on one database', () => {
  let a: TestService;
  let b: TestService;
  let devices: { id: number; token: string }[];
  beforeAll(async () => {
    a = await startTestService({ sweepIntervalMs: 3_600_000 }, { now });
    b = await startTestService({ sweepIntervalMs: 3_600_000 }, { databaseUrl: a.databaseUrl, now });
    devices = [];
    for (let i = 0; i < 3; i++) devices.push(await a.newDevice('fleet', OWNER));
  });
  // B only borrows A's database; A owns it and drops it, so B must stop first.
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** Heartbeats every device through alternate instances; returns the time they were seen. */
  async function seeAll(): Promise<number> {
    clock += 1000;
    for (const [i, d] of devices.entries()) expect((await (i % 2 ? b : a).post(HEARTBEAT, null, d.token)).status).toBe(200);
    return clock;
  }
  const offlineCounts = async () => Promise.all(devices.map(async (d) => (await events(a, d.id, 'offline')).length));

  it('skips the sweep on both instances while another session holds the sweeper lock', async () => {
    const seenAt = await seeAll();
    clock = seenAt + DEFAULT_TIMEOUT_MS + 1;
    const holder = new pg.Client({ connectionString: a.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [SWEEPER_LOCK_KEY]);
      expect(await Promise.all([a.service.sweepOnce!(), b.service.sweepOnce!()])).toEqual([null, null]);
      for (const d of devices) expect((await deviceState(a, d.id)).status).toBe('online');
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }
    expect(await b.service.sweepOnce!()).toBe(3);
    expect(await offlineCounts()).toEqual([1, 1, 1]);
  });

  it('marks each device offline exactly once when both instances sweep at the same moment', async () => {
    const before = await offlineCounts();
    const rounds = 5;
    for (let round = 1; round <= rounds; round++) {
      const seenAt = await seeAll();
      clock = seenAt + DEFAULT_TIMEOUT_MS + 1;
      const results = await Promise.all([a.service.sweepOnce!(), b.service.sweepOnce!()]);
      // The loser either found the lock held (null) or ran after the winner's commit and found nothing (0).
      expect(results.reduce<number>((sum, r) => sum + (r ?? 0), 0), `round ${round}: ${JSON.stringify(results)}`).toBe(3);
      expect(results.filter((r) => r === 3)).toHaveLength(1);
    }
    expect(await offlineCounts()).toEqual(before.map((n) => n + rounds));
  });
});

describe('periodic sweeping across two instances', () => {
  let p: TestService;
  let q: TestService | undefined;
  beforeAll(async () => {
    p = await startTestService({ sweepIntervalMs: 100 }, { now });
    q = await startTestService({ sweepIntervalMs: 100 }, { databaseUrl: p.databaseUrl, now });
  });
  afterAll(async () => {
    await q?.close();
    await p?.close();
  });

  it('sweeps on its timer once per device while both run, and carries on on the remaining instance after one closes', async () => {
    const first = await p.newDevice('worker', OWNER);
    clock += 1000;
    expect((await q!.post(HEARTBEAT, null, first.token)).status).toBe(200);
    clock += DEFAULT_TIMEOUT_MS + 1;
    expect(await waitFor(async () => (await deviceState(p, first.id)).status === 'offline', 3000)).toBe(true);
    await sleep(500); // several more rounds of both timers
    expect(await events(p, first.id, 'offline')).toHaveLength(1);

    await q!.close();
    q = undefined;
    const second = await p.newDevice('worker', OWNER);
    clock += 1000;
    const seenAt = clock;
    for (const d of [first, second]) expect((await p.post(HEARTBEAT, null, d.token)).status).toBe(200);
    clock = seenAt + DEFAULT_TIMEOUT_MS + 1;
    const bothOffline = async () => (await Promise.all([first, second].map((d) => deviceState(p, d.id)))).every((s) => s.status === 'offline');
    expect(await waitFor(bothOffline, 3000)).toBe(true);
    expect((await events(p, first.id, 'offline')).map((e) => e.timeMs).slice(1)).toEqual([seenAt + DEFAULT_TIMEOUT_MS + 1]);
    expect(await events(p, second.id, 'offline')).toHaveLength(1);
  });
});

describe('offline sweeper errors', () => {
  it('keeps a failing periodic sweep inside: it logs, reports each failure and tries again at the next interval', async () => {
    // A real pool to a port where nothing listens: every sweep fails to connect.
    const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 1000 });
    pool.on('error', () => {});
    const failures: Error[] = [];
    const sweeper = new OfflineSweeper(pool, {
      offlineAfterS: 300, intervalMs: 20, now, log: createLogger('silent'), onError: (err: Error) => failures.push(err),
    });
    sweeper.start();
    try {
      expect(await waitFor(async () => failures.length >= 3, 3000)).toBe(true);
      await expect(sweeper.sweepOnce(), 'sweepOnce itself reports the error to its caller').rejects.toThrow();
    } finally {
      await sweeper.stop();
      await pool.end();
    }
    const afterStop = failures.length;
    await sleep(100);
    expect(failures.length, 'no sweep runs after stop()').toBe(afterStop);
  });
});
