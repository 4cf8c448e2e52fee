// What an accepted request leaves behind, read from the database: device status and last-seen, latest
// values (never overwritten by older readings), module events, GPS rows, and the heartbeat endpoint.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const HEARTBEAT = '/api/webhooks/heartbeat';
const OWNER = 'state-owner@example.com';
const START = Date.UTC(2026, 0, 15, 12, 0, 0);

let clock = START;
let t: TestService;
beforeAll(async () => { t = await startTestService({}, { now: () => clock }); });
afterAll(async () => { await t?.close(); });

const device = (module = 'vehicle') => t.newDevice(module, OWNER);
const ms = (d: Date | null) => (d === null ? null : d.getTime());

async function deviceRow(id: number) {
  const r = await t.db.query('SELECT status, last_seen_at FROM devices WHERE id = $1', [id]);
  return { status: r.rows[0].status as string, lastSeen: ms(r.rows[0].last_seen_at) };
}
async function events(id: number) {
  const r = await t.db.query('SELECT time, module, event_type, readings, detail FROM module_events WHERE device_id = $1 ORDER BY time, event_type', [id]);
  return r.rows.map((e) => ({ ...e, time: ms(e.time) }));
}
async function latest(id: number) {
  const r = await t.db.query('SELECT metric_name, value, unit, recorded_at FROM latest_metrics WHERE device_id = $1 ORDER BY metric_name', [id]);
  return r.rows.map((l) => ({ ...l, recorded_at: ms(l.recorded_at) }));
}
async function gps(id: number) {
  const r = await t.db.query('SELECT time, lat, lng, altitude_m, speed_kmh, heading_deg, accuracy_m FROM gps_points WHERE device_id = $1 ORDER BY time', [id]);
  return r.rows.map((g) => ({ ...g, time: ms(g.time) }));
}
async function ok(path: string, body: unknown, token: string) {
  const r = await t.post(path, body, token);
  expect(r.status, r.text).toBe(200);
  return r;
}

describe('device status and last-seen', () => {
  it('marks an offline device online and moves last_seen_at forward with each accepted request', async () => {
    const d = await device();
    expect(await deviceRow(d.id)).toEqual({ status: 'offline', lastSeen: null });
    clock = START + 1_000;
    await ok(INGEST, { data: { speed: 10 } }, d.token);
    expect(await deviceRow(d.id)).toEqual({ status: 'online', lastSeen: START + 1_000 });
    clock = START + 61_000;
    await ok(INGEST, { data: { speed: 11 }, recorded_at: '2026-01-01 00:00:00' }, d.token);
    // Last-seen is the time of contact, not the reading's recorded_at.
    expect(await deviceRow(d.id)).toEqual({ status: 'online', lastSeen: START + 61_000 });
  });

  it('stores a telemetry event with the readings count and skipped count, plus an online event on first contact', async () => {
    const d = await device('worker');
    clock = START + 2_000;
    await ok(INGEST, { data: { hr: 80, spo2: 97, note: 'x' } }, d.token);
    expect(await events(d.id)).toEqual([
      { time: START + 2_000, module: 'worker', event_type: 'online', readings: 0, detail: null },
      { time: START + 2_000, module: 'worker', event_type: 'telemetry', readings: 2, detail: { skipped: 1 } },
    ]);
    clock = START + 3_000;
    await ok(INGEST, { metric_name: 'hr', metric_value: 81 }, d.token);
    const after = await events(d.id);
    expect(after.filter((e) => e.event_type === 'online')).toHaveLength(1);
    expect(after[2]).toEqual({ time: START + 3_000, module: 'worker', event_type: 'telemetry', readings: 1, detail: null });
  });

  it('stores another online event when a device that went offline reports again', async () => {
    const d = await device();
    clock = START + 4_000;
    await ok(INGEST, { data: { v: 1 } }, d.token);
    await t.db.query("UPDATE devices SET status = 'offline' WHERE id = $1", [d.id]);
    clock = START + 5_000;
    await ok(INGEST, { data: { v: 2 } }, d.token);
    const online = (await events(d.id)).filter((e) => e.event_type === 'online').map((e) => e.time);
    expect(online).toEqual([START + 4_000, START + 5_000]);
    expect((await deviceRow(d.id)).status).toBe('online');
  });
});

describe('latest values', () => {
  it('holds the value, unit and recorded_at of each metric after a POST', async () => {
    const d = await device();
    await ok(INGEST, { readings: [{ metric_name: 'fuel', metric_value: 55.5, unit: 'L', recorded_at: '2026-01-15 11:00:00' }] }, d.token);
    expect(await latest(d.id)).toEqual([{ metric_name: 'fuel', value: 55.5, unit: 'L', recorded_at: Date.UTC(2026, 0, 15, 11) }]);
  });

  it('is never overwritten by an older reading sent later, while both readings are in telemetry', async () => {
    const d = await device();
    await ok(INGEST, { data: { temp: 30 }, recorded_at: '2026-01-15 10:00:00' }, d.token);
    await ok(INGEST, { data: { temp: 20 }, recorded_at: '2026-01-15 09:00:00' }, d.token);
    expect(await latest(d.id)).toEqual([{ metric_name: 'temp', value: 30, unit: null, recorded_at: Date.UTC(2026, 0, 15, 10) }]);
    const all = await t.db.query('SELECT metric_value FROM telemetry WHERE device_id = $1 ORDER BY time', [d.id]);
    expect(all.rows.map((r) => r.metric_value)).toEqual([20, 30]);
    // A newer one does replace it.
    await ok(INGEST, { data: { temp: 31 }, recorded_at: '2026-01-15 10:00:01' }, d.token);
    expect((await latest(d.id))[0].value).toBe(31);
  });

  it('takes the later request when two readings carry the same time', async () => {
    const d = await device();
    await ok(INGEST, { metric_name: 'rpm', metric_value: 1000, unit: 'rpm', recorded_at: '2026-01-15 10:00:00' }, d.token);
    await ok(INGEST, { metric_name: 'rpm', metric_value: 2000, unit: 'r/min', recorded_at: '2026-01-15T10:00:00Z' }, d.token);
    expect(await latest(d.id)).toEqual([{ metric_name: 'rpm', value: 2000, unit: 'r/min', recorded_at: Date.UTC(2026, 0, 15, 10) }]);
  });

  it('keeps the newest of several readings of one metric in one request, whatever their order', async () => {
    const d = await device();
    await ok(INGEST, { readings: [
      { metric_name: 'odo', metric_value: 300, recorded_at: '2026-01-15 10:00:00' },
      { metric_name: 'odo', metric_value: 100, recorded_at: '2026-01-15 08:00:00' },
      { metric_name: 'odo', metric_value: 200, recorded_at: '2026-01-15 09:00:00' },
    ] }, d.token);
    expect((await latest(d.id)).map((l) => l.value)).toEqual([300]);
  });

  it('keeps the newer value when a newer and an older request for one device run at the same time', async () => {
    const d = await device();
    await Promise.all([
      t.post(INGEST, { data: { load: 9 }, recorded_at: '2026-01-15 11:59:59' }, d.token),
      t.post(INGEST, { data: { load: 1 }, recorded_at: '2026-01-15 00:00:00' }, d.token),
      t.post(INGEST, { data: { load: 5 }, recorded_at: '2026-01-15 06:00:00' }, d.token),
    ]).then((rs) => rs.forEach((r) => expect(r.status).toBe(200)));
    expect((await latest(d.id)).map((l) => l.value)).toEqual([9]);
  });
});

describe('GPS', () => {
  const at = Date.UTC(2026, 0, 15, 11, 30);
  it('stores a top-level gps object with all its optional fields at the body\'s recorded_at', async () => {
    const d = await device();
    const r = await ok(INGEST, { data: { speed: 50 }, recorded_at: '2026-01-15 11:30:00',
      gps: { lat: 52.52, lng: 13.405, altitude_m: 34.5, speed_kmh: 50, heading_deg: 270, accuracy_m: 3.2 } }, d.token);
    expect(r.json.inserted).toBe(1);
    expect(await gps(d.id)).toEqual([{ time: at, lat: 52.52, lng: 13.405, altitude_m: 34.5, speed_kmh: 50, heading_deg: 270, accuracy_m: 3.2 }]);
  });

  it('stores a gps object without optional fields with nulls in their place', async () => {
    const d = await device();
    await ok(INGEST, { metric_name: 'x', metric_value: 1, recorded_at: '2026-01-15 11:30:00', gps: { lat: -33.9, lng: 18.4 } }, d.token);
    expect(await gps(d.id)).toEqual([{ time: at, lat: -33.9, lng: 18.4, altitude_m: null, speed_kmh: null, heading_deg: null, accuracy_m: null }]);
  });

  it('stores data.latitude/longitude as a GPS row and also as readings', async () => {
    const d = await device();
    const r = await ok(INGEST, { data: { latitude: 48.85, longitude: 2.35, altitude_m: 35 }, recorded_at: '2026-01-15 11:30:00' }, d.token);
    expect(r.json.inserted).toBe(3);
    expect(await gps(d.id)).toEqual([{ time: at, lat: 48.85, lng: 2.35, altitude_m: 35, speed_kmh: null, heading_deg: null, accuracy_m: null }]);
    expect((await latest(d.id)).map((l) => [l.metric_name, l.value])).toEqual([['altitude_m', 35], ['latitude', 48.85], ['longitude', 2.35]]);
  });

  it('stores data.lat/lng with optional speed, heading and accuracy as a GPS row', async () => {
    const d = await device();
    clock = START + 9_000;
    await ok(INGEST, { data: { lat: 40.7, lng: -74, speed_kmh: 12.5, heading_deg: 90, accuracy_m: 8 } }, d.token);
    expect(await gps(d.id)).toEqual([{ time: START + 9_000, lat: 40.7, lng: -74, altitude_m: null, speed_kmh: 12.5, heading_deg: 90, accuracy_m: 8 }]);
  });

  it('stores no GPS row when the body has none', async () => {
    const d = await device();
    await ok(INGEST, { data: { speed: 3 } }, d.token);
    expect(await gps(d.id)).toEqual([]);
  });
});

describe('POST /api/webhooks/heartbeat', () => {
  it.each([
    ['no body', undefined],
    ['a junk body', 'this is {not json'],
    ['a telemetry body, which it ignores', JSON.stringify({ data: { hr: 70 } })],
  ])('with %s answers 200, marks the device online and stores a heartbeat event and no telemetry', async (_label, body) => {
    const d = await device('home_infra');
    clock = START + 20_000;
    const res = await fetch(t.baseUrl + HEARTBEAT, { method: 'POST', headers: { Authorization: `Bearer ${d.token}` }, body });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`{"ok":true,"status":"ok","device_id":${d.id}}`);
    expect(await deviceRow(d.id)).toEqual({ status: 'online', lastSeen: START + 20_000 });
    expect(await events(d.id)).toEqual([
      { time: START + 20_000, module: 'home_infra', event_type: 'heartbeat', readings: 0, detail: null },
      { time: START + 20_000, module: 'home_infra', event_type: 'online', readings: 0, detail: null },
    ]);
    const tel = await t.db.query('SELECT count(*)::int AS n FROM telemetry WHERE device_id = $1', [d.id]);
    expect(tel.rows[0].n).toBe(0);
    expect(await latest(d.id)).toEqual([]);
  });

  it('answers a bad token with 401 and WWW-Authenticate: Bearer, storing nothing', async () => {
    const before = await t.db.query("SELECT count(*)::int AS n FROM module_events WHERE event_type = 'heartbeat'");
    for (const token of [crypto.randomBytes(32).toString('hex'), 'short']) {
      const r = await t.post(HEARTBEAT, '', token);
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ error: 'Invalid device token.' });
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
    const after = await t.db.query("SELECT count(*)::int AS n FROM module_events WHERE event_type = 'heartbeat'");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('moves last_seen_at forward for a device that is already online', async () => {
    const d = await device();
    clock = START + 30_000;
    await ok(INGEST, { data: { v: 1 } }, d.token);
    clock = START + 90_000;
    await ok(HEARTBEAT, '', d.token);
    expect(await deviceRow(d.id)).toEqual({ status: 'online', lastSeen: START + 90_000 });
    expect((await events(d.id)).map((e) => e.event_type)).toEqual(['online', 'telemetry', 'heartbeat']);
  });
});
