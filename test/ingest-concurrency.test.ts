// Many connections writing the same few devices and metrics through several workers at once: no request
// may fail on a deadlock, every reading is stored once, and latest_metrics keeps the newest reading.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const HEARTBEAT = '/api/webhooks/heartbeat';
const METRICS = ['temperature', 'humidity', 'pressure', 'speed', 'rpm', 'fuel'];
const BASE_S = Math.floor(Date.UTC(2025, 0, 1) / 1000);

interface Reading { device: number; metric: string; timeS: number; value: number }
interface Job { device: { id: number; token: string }; readings: Reading[] | null }

/** A deterministic shuffle (mulberry32), so a failure can be replayed from the printed seed. */
function shuffler(seed: number) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return <T>(xs: T[]): T[] => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [xs[i], xs[j]] = [xs[j], xs[i]];
    }
    return xs;
  };
}

/**
 * `requests` jobs over `devices`: most carry 1 to 6 readings of the shared metrics, each at a distinct second
 * per device (so the newest per key is unambiguous), handed out in shuffled order; one in ten is a heartbeat.
 */
function plan(devices: { id: number; token: string }[], requests: number, seed: number): Job[] {
  const shuffle = shuffler(seed);
  const seconds = devices.map(() => shuffle(Array.from({ length: requests * 6 }, (_, i) => i)));
  const jobs: Job[] = [];
  for (let i = 0; i < requests; i++) {
    const di = i % devices.length;
    const device = devices[di];
    if (i % 10 === 9) { jobs.push({ device, readings: null }); continue; }
    const n = 1 + (i % 6);
    const readings = Array.from({ length: n }, (_, k) => {
      const s = seconds[di].pop()!;
      return { device: device.id, metric: METRICS[(i + k) % METRICS.length], timeS: BASE_S + s, value: s + 0.5 + i / 1e6 };
    });
    jobs.push({ device, readings });
  }
  return shuffle(jobs);
}

const toBody = (readings: Reading[]) => ({
  readings: readings.map((r) => ({ metric_name: r.metric, metric_value: r.value, recorded_at: new Date(r.timeS * 1000).toISOString() })),
});

/** Runs the jobs over `connections` concurrent loops, spread over the given services; returns every answer. */
async function hammer(services: TestService[], jobs: Job[], connections: number) {
  const answers: { job: Job; status: number; json: any }[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: connections }, async (_, c) => {
    const t = services[c % services.length];
    while (next < jobs.length) {
      const job = jobs[next++];
      const r = job.readings ? await t.post(INGEST, toBody(job.readings), job.device.token) : await t.post(HEARTBEAT, null, job.device.token);
      answers.push({ job, status: r.status, json: r.json });
    }
  }));
  return answers;
}

/** Asserts the stored telemetry is exactly the readings sent and latest_metrics holds the newest of each key. */
async function expectStoredExactly(t: TestService, deviceIds: number[], jobs: Job[], answers: { json: any }[]) {
  const sent = jobs.flatMap((j) => j.readings ?? []);
  const inserted = answers.reduce((sum, a) => sum + (a.json?.inserted ?? 0), 0);
  const stored = await t.db.query(
    `SELECT device_id::int AS device, metric_name AS metric, extract(epoch FROM time)::int AS "timeS", metric_value AS value
       FROM telemetry WHERE device_id = ANY($1) ORDER BY device_id, time, metric_name`, [deviceIds]);
  expect(stored.rows.length).toBe(inserted);
  const key = (r: Reading) => `${r.device}/${r.timeS}/${r.metric}/${r.value}`;
  expect(stored.rows.map(key).sort()).toEqual(sent.map(key).sort());

  const newest = new Map<string, Reading>();
  for (const r of sent) {
    const k = `${r.device}/${r.metric}`;
    if (!newest.has(k) || newest.get(k)!.timeS < r.timeS) newest.set(k, r);
  }
  const latest = await t.db.query(
    `SELECT device_id::int AS device, metric_name AS metric, extract(epoch FROM recorded_at)::int AS "timeS", value
       FROM latest_metrics WHERE device_id = ANY($1)`, [deviceIds]);
  expect(latest.rows.map(key).sort()).toEqual([...newest.values()].map(key).sort());

  const events = await t.db.query(
    `SELECT device_id::int AS device, event_type, count(*)::int AS n FROM module_events
      WHERE device_id = ANY($1) AND event_type IN ('telemetry', 'heartbeat') GROUP BY 1, 2`, [deviceIds]);
  const expected = new Map<string, number>();
  for (const j of jobs) {
    const k = `${j.device.id}/${j.readings ? 'telemetry' : 'heartbeat'}`;
    expected.set(k, (expected.get(k) ?? 0) + 1);
  }
  expect(new Map(events.rows.map((r) => [`${r.device}/${r.event_type}`, r.n]))).toEqual(expected);
  const status = await t.db.query(`SELECT count(*)::int AS n FROM devices WHERE id = ANY($1) AND status = 'online'`, [deviceIds]);
  expect(status.rows[0].n).toBe(deviceIds.length);
}

describe('concurrent ingestion into the same devices', () => {
  let t: TestService;
  const owner = `concurrent-${Date.now()}@example.com`;
  // Small batches and four workers: several transactions upsert the same latest_metrics and devices rows at once.
  beforeAll(async () => {
    t = await startTestService({ ingestWorkers: 4, batchMaxRows: 50, batchMaxWaitMs: 2 });
    // A short pause before each row lock widens the windows between locks, so that a lock order that is not
    // sorted would deadlock on most runs instead of on a few.
    await t.db.query(`CREATE FUNCTION pause_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.0003); RETURN NEW; END $$;
      CREATE TRIGGER pause_row BEFORE INSERT ON latest_metrics FOR EACH ROW EXECUTE FUNCTION pause_row();
      CREATE TRIGGER pause_row BEFORE UPDATE ON devices FOR EACH ROW EXECUTE FUNCTION pause_row();`);
  });
  afterAll(async () => { await t?.close(); });

  async function newDevices(n: number) {
    const first = await t.newDevice('fleet', owner);
    return [first, ...await Promise.all(Array.from({ length: n - 1 }, () => t.newDevice('fleet', owner)))];
  }

  it('answers 200 to 400 requests from 40 connections on 4 devices and stores each reading once, newest in latest', async () => {
    const devices = await newDevices(4);
    const seed = Date.now() % 1_000_000;
    const jobs = plan(devices, 400, seed);
    const answers = await hammer([t], jobs, 40);
    const failed = answers.filter((a) => a.status !== 200);
    expect(failed.map((a) => [a.status, a.json]), `seed ${seed}`).toEqual([]);
    for (const a of answers) {
      if (a.job.readings) expect(a.json).toEqual({ ok: true, status: 'ok', inserted: a.job.readings.length, skipped: 0, device_id: a.job.device.id });
    }
    await expectStoredExactly(t, devices.map((d) => d.id), jobs, answers);
    // Several batches did run at once: the batch-size histogram saw more than one batch.
    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(Number(/^ingest_batch_rows_count (\d+)/m.exec(metrics)?.[1])).toBeGreaterThan(4);
  });

  it('keeps the newest value when two instances write the same devices at once', async () => {
    const second = await startTestService({ ingestWorkers: 4, batchMaxRows: 50, batchMaxWaitMs: 2 }, { databaseUrl: t.databaseUrl });
    try {
      const devices = await newDevices(3);
      const seed = (Date.now() + 1) % 1_000_000;
      const jobs = plan(devices, 300, seed);
      const answers = await hammer([t, second], jobs, 30);
      expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.json]), `seed ${seed}`).toEqual([]);
      await expectStoredExactly(t, devices.map((d) => d.id), jobs, answers);
    } finally {
      await second.close();
    }
  });
});
