// Durability of ingestion: a 200 means the rows are committed, a failed batch stores nothing of any of its
// requests, and a full queue refuses a request whole. Every assertion reads the database.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

const DB_UNAVAILABLE = 'The database did not commit this batch; nothing of this request was stored. Retry after the Retry-After seconds.';
const QUEUE_FULL = 'The ingest queue is full; nothing of this request was stored. Retry after the Retry-After seconds, with backoff.';
const INGEST = '/api/telemetry-ingest';
const HEARTBEAT = '/api/webhooks/heartbeat';

/** Everything stored for one device, across the four tables a request writes. */
async function storedFor(db: pg.Pool, deviceId: number) {
  const r = await db.query(`SELECT
      (SELECT count(*)::int FROM telemetry WHERE device_id = $1) AS telemetry,
      (SELECT count(*)::int FROM latest_metrics WHERE device_id = $1) AS latest,
      (SELECT count(*)::int FROM gps_points WHERE device_id = $1) AS gps,
      (SELECT count(*)::int FROM module_events WHERE device_id = $1 AND event_type IN ('telemetry', 'heartbeat')) AS events,
      (SELECT count(*)::int FROM module_events WHERE device_id = $1 AND event_type NOT IN ('telemetry', 'heartbeat')) AS other_events,
      (SELECT status FROM devices WHERE id = $1) AS status,
      (SELECT last_seen_at FROM devices WHERE id = $1) AS last_seen_at`, [deviceId]);
  return r.rows[0] as { telemetry: number; latest: number; gps: number; events: number; other_events: number; status: string; last_seen_at: Date | null };
}

const NOTHING = { telemetry: 0, latest: 0, gps: 0, events: 0, other_events: 0, status: 'offline', last_seen_at: null };

/** n devices of one owner: the owner is created first (bcrypt), then the devices at once. */
async function newDevices(t: TestService, n: number, module: string, owner: string) {
  const first = await t.newDevice(module, owner);
  return [first, ...await Promise.all(Array.from({ length: n - 1 }, () => t.newDevice(module, owner)))];
}

async function queueRows(t: TestService): Promise<number> {
  const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
  const m = /^ingest_queue_rows (\d+)/m.exec(text);
  if (!m) throw new Error('ingest_queue_rows missing from /metrics');
  return Number(m[1]);
}

async function waitForQueueRows(t: TestService, rows: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await queueRows(t)) === rows) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`queue never reached ${rows} rows (now ${await queueRows(t)})`);
}

describe('a 200 answer and a failed batch', () => {
  let t: TestService;
  let check: pg.Pool;
  const owner = `durable-${Date.now()}@example.com`;
  // A long wait with a small batch: concurrent requests share batches, and batches flush by size under load.
  beforeAll(async () => {
    t = await startTestService({ ingestWorkers: 2, batchMaxRows: 25, batchMaxWaitMs: 200 });
    check = new pg.Pool({ connectionString: t.databaseUrl, max: 30 });
    check.on('error', () => {}); // DROP DATABASE ... WITH (FORCE) ends idle clients: not a test failure
  });
  afterAll(async () => { await check?.end(); await t?.close(); });

  it('finds every reading in the database at the moment its 200 arrives, even when commits are slow', async () => {
    // A deferred trigger sleeps inside COMMIT: a 200 sent before the commit finished would find nothing.
    await t.db.query(`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.03); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER slow_commit AFTER UPDATE ON devices DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();`);
    try {
      const devices = await newDevices(t, 4, 'vehicle', owner);
      const checks: Promise<void>[] = [];
      const missing: number[] = [];
      const requests = Array.from({ length: 120 }, async (_, i) => {
        const d = devices[i % devices.length];
        const marker = 1_000_000 + i + 0.25;
        const body = { readings: [{ metric_name: `marker_${i}`, metric_value: marker }], gps: { lat: -45 + i / 10, lng: 10 } };
        const r = await t.post(INGEST, body, d.token);
        expect(r.status).toBe(200);
        // Query at once, on a connection of our own: no pool queue between the answer and the look.
        const c = check.query(`SELECT
            (SELECT count(*)::int FROM telemetry WHERE device_id = $1 AND metric_value = $2) AS t,
            (SELECT count(*)::int FROM latest_metrics WHERE device_id = $1 AND metric_name = $3 AND value = $2) AS l,
            (SELECT count(*)::int FROM gps_points WHERE device_id = $1 AND lat = $4) AS g`,
        [d.id, marker, `marker_${i}`, -45 + i / 10]).then((q) => {
          if (q.rows[0].t !== 1 || q.rows[0].l !== 1 || q.rows[0].g !== 1) missing.push(i);
        });
        checks.push(c);
        await c;
      });
      await Promise.all(requests);
      await Promise.all(checks);
      expect(missing).toEqual([]);
      const total = await t.db.query(`SELECT count(*)::int AS n FROM telemetry WHERE metric_name LIKE 'marker\\_%'`);
      expect(total.rows[0].n).toBe(120);
    } finally {
      await t.db.query('DROP TRIGGER slow_commit ON devices; DROP FUNCTION slow_commit();');
    }
  });

  it('answers 503 to every request of a batch that PostgreSQL refused, and stores nothing of any of them', async () => {
    await t.db.query(`CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.metric_value = 13013 THEN RAISE EXCEPTION 'poison reading'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER poison BEFORE INSERT ON telemetry FOR EACH ROW EXECUTE FUNCTION poison();`);
    try {
      const [good1, good2, beat, bad] = await newDevices(t, 4, 'health', owner);
      // All sent at once: they arrive well inside the 200 ms window and share one batch with the poison.
      const answers = await Promise.all([
        t.post(INGEST, { data: { heart_rate: 71, spo2: 98 }, gps: { lat: 1, lng: 2 } }, good1.token),
        t.post(INGEST, { metric_name: 'temperature', metric_value: 36.6, unit: 'C' }, good2.token),
        t.post(HEARTBEAT, null, beat.token),
        t.post(INGEST, { readings: [{ metric_name: 'ok', metric_value: 1 }, { metric_name: 'bad', metric_value: 13013 }], gps: { lat: 3, lng: 4 } }, bad.token),
        t.post(INGEST, { data: { steps: 10 } }, good1.token),
      ]);
      for (const a of answers) {
        expect(a.status).toBe(503);
        expect(a.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
        expect(a.json).toEqual({ error: DB_UNAVAILABLE });
      }
      for (const d of [good1, good2, beat, bad]) expect(await storedFor(t.db, d.id)).toEqual(NOTHING);

      // The next batch, without the poison, commits while the trigger is still there.
      const later = await t.post(INGEST, { data: { heart_rate: 72 } }, good1.token);
      expect(later.status).toBe(200);
      expect((await storedFor(t.db, good1.id))).toMatchObject({ telemetry: 1, latest: 1, gps: 0, events: 1, other_events: 1, status: 'online' });
    } finally {
      await t.db.query('DROP TRIGGER poison ON telemetry; DROP FUNCTION poison();');
    }
  });

  it('stores the very reading that failed once the database accepts it again', async () => {
    const d = await t.newDevice('health', owner);
    const r = await t.post(INGEST, { readings: [{ metric_name: 'bad', metric_value: 13013 }] }, d.token);
    expect(r.status).toBe(200);
    const rows = await t.db.query('SELECT metric_name, metric_value FROM telemetry WHERE device_id = $1', [d.id]);
    expect(rows.rows).toEqual([{ metric_name: 'bad', metric_value: 13013 }]);
  });
});

describe('a full ingest queue', () => {
  // QUEUE_MAX_ROWS = 5; a request counts its readings plus one row for its module event.
  let t: TestService;
  const owner = `queue-${Date.now()}@example.com`;
  beforeAll(async () => { t = await startTestService({ ingestWorkers: 1, queueMaxRows: 5, batchMaxRows: 1000, batchMaxWaitMs: 600 }); });
  afterAll(async () => { await t?.close(); });

  const expectFull = (r: Awaited<ReturnType<TestService['post']>>) => {
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(r.json).toEqual({ error: QUEUE_FULL });
  };
  const readings = (n: number, base: number) => ({ readings: Array.from({ length: n }, (_, i) => ({ metric_name: `m${i}`, metric_value: base + i })) });

  it('takes a lone request of limit - 1 and of exactly limit rows, and refuses one of limit + 1 rows', async () => {
    const [d1, d2, d3] = await newDevices(t, 3, 'factory', owner);
    expect((await t.post(INGEST, readings(3, 10), d1.token)).status).toBe(200); // 4 rows
    expectFull(await t.post(INGEST, readings(5, 20), d2.token)); // 6 rows, even into an empty queue
    expect((await t.post(INGEST, readings(4, 30), d3.token)).status).toBe(200); // 5 rows
    expect(await storedFor(t.db, d1.id)).toMatchObject({ telemetry: 3, latest: 3, events: 1, status: 'online' });
    expect(await storedFor(t.db, d2.id)).toEqual(NOTHING);
    expect(await storedFor(t.db, d3.id)).toMatchObject({ telemetry: 4, latest: 4, events: 1, status: 'online' });
  });

  it('accepts the request that exactly fills a shared queue and refuses the ones that overflow it', async () => {
    const [a, over1, c, over2] = await newDevices(t, 4, 'factory', owner);
    const first = t.post(INGEST, { data: { pressure: 1.5, flow: 2.5 } }, a.token); // 3 rows queued
    await waitForQueueRows(t, 3);
    expectFull(await t.post(INGEST, { data: { x: 1, y: 2 }, gps: { lat: 5, lng: 5 } }, over1.token)); // 3 + 3 = 6
    const filling = t.post(INGEST, { metric_name: 'rpm', metric_value: 900, unit: 'rpm' }, c.token); // 3 + 2 = 5
    await waitForQueueRows(t, 5);
    expectFull(await t.post(HEARTBEAT, null, over2.token)); // 5 + 1 = 6
    expectFull(await t.post(INGEST, { data: { x: 1 } }, over1.token));

    const [r1, r2] = await Promise.all([first, filling]);
    expect(r1.json).toEqual({ ok: true, status: 'ok', inserted: 2, skipped: 0, device_id: a.id });
    expect(r2.json).toEqual({ ok: true, status: 'ok', inserted: 1, skipped: 0, device_id: c.id });
    expect(await storedFor(t.db, a.id)).toMatchObject({ telemetry: 2, latest: 2, gps: 0, events: 1, status: 'online' });
    expect(await storedFor(t.db, c.id)).toMatchObject({ telemetry: 1, latest: 1, gps: 0, events: 1, status: 'online' });
    expect(await storedFor(t.db, over1.id)).toEqual(NOTHING);
    expect(await storedFor(t.db, over2.id)).toEqual(NOTHING);

    // Committed rows leave the queue: the refused request goes through on retry.
    expect(await queueRows(t)).toBe(0);
    expect((await t.post(INGEST, { data: { x: 1, y: 2 }, gps: { lat: 5, lng: 5 } }, over1.token)).status).toBe(200);
    expect(await storedFor(t.db, over1.id)).toMatchObject({ telemetry: 2, latest: 2, gps: 1, events: 1, status: 'online' });
  });
});
