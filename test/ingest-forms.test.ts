// POST /api/telemetry-ingest over real HTTP: each body form, skipped values and every recorded_at form,
// asserted on the rows that land in telemetry. The service's clock is pinned so server time is exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const OWNER = 'forms-owner@example.com';
const START = Date.UTC(2026, 0, 15, 12, 0, 0);

let clock = START;
let t: TestService;

beforeAll(async () => { t = await startTestService({}, { now: () => clock }); });
afterAll(async () => { await t?.close(); });

const device = () => t.newDevice('health', OWNER);

interface Row { metric_name: string; metric_value: number; unit: string | null; time: number }

async function stored(deviceId: number): Promise<Row[]> {
  const res = await t.db.query(
    'SELECT metric_name, metric_value, unit, time FROM telemetry WHERE device_id = $1 ORDER BY metric_name, time', [deviceId]);
  return res.rows.map((r) => ({ ...r, time: (r.time as Date).getTime() }));
}

async function ingestOk(token: string, body: unknown, inserted: number, skipped: number, deviceId: number) {
  const r = await t.post(INGEST, body, token);
  expect(r.status, r.text).toBe(200);
  // The exact body, key order included: devices parse it with anything from jq to a microcontroller.
  expect(r.text).toBe(`{"ok":true,"status":"ok","inserted":${inserted},"skipped":${skipped},"device_id":${deviceId}}`);
  return r;
}

describe('the three body forms', () => {
  it('stores every numeric key of the flat data form at the top-level recorded_at, read as UTC', async () => {
    const d = await device();
    await ingestOk(d.token, { data: { heart_rate: 72, spo2: 97.5, temp: -0.25 }, recorded_at: '2026-01-10 05:06:07' }, 3, 0, d.id);
    const at = Date.UTC(2026, 0, 10, 5, 6, 7);
    expect(await stored(d.id)).toEqual([
      { metric_name: 'heart_rate', metric_value: 72, unit: null, time: at },
      { metric_name: 'spo2', metric_value: 97.5, unit: null, time: at },
      { metric_name: 'temp', metric_value: -0.25, unit: null, time: at },
    ]);
  });

  it('skips and counts strings, booleans and null in the flat form and stores only the numbers', async () => {
    const d = await device();
    await ingestOk(d.token, { data: { temp: 21.5, label: 'kitchen', door_open: true, broken: null, zero: 0 } }, 2, 3, d.id);
    const rows = await stored(d.id);
    expect(rows.map((r) => [r.metric_name, r.metric_value])).toEqual([['temp', 21.5], ['zero', 0]]);
  });

  it('stores batch readings with their units, each at its own recorded_at when it has one', async () => {
    const d = await device();
    await ingestOk(d.token, {
      recorded_at: '2026-01-14 07:00:00',
      readings: [
        { metric_name: 'temperature', metric_value: 21.5, unit: 'C' },
        { metric_name: 'humidity', metric_value: 40, unit: '%', recorded_at: '2026-01-14T08:30:00Z' },
        { metric_name: 'pressure', metric_value: 1013.25, recorded_at: 1768377600 },
        { metric_name: 'note', metric_value: 'window open' },
        { metric_name: 'flag', metric_value: false, unit: 'bool' },
      ],
    }, 3, 2, d.id);
    expect(await stored(d.id)).toEqual([
      { metric_name: 'humidity', metric_value: 40, unit: '%', time: Date.UTC(2026, 0, 14, 8, 30) },
      { metric_name: 'pressure', metric_value: 1013.25, unit: null, time: 1768377600_000 },
      { metric_name: 'temperature', metric_value: 21.5, unit: 'C', time: Date.UTC(2026, 0, 14, 7) },
    ]);
  });

  it('stores the single metric_name/metric_value form with its unit', async () => {
    const d = await device();
    await ingestOk(d.token, { metric_name: 'speed', metric_value: 88.5, unit: 'km/h', recorded_at: '2026-01-12 00:00:01' }, 1, 0, d.id);
    expect(await stored(d.id)).toEqual([{ metric_name: 'speed', metric_value: 88.5, unit: 'km/h', time: Date.UTC(2026, 0, 12, 0, 0, 1) }]);
  });

  it('takes the readings of all three forms when one body carries them together', async () => {
    const d = await device();
    await ingestOk(d.token, {
      recorded_at: '2026-01-13 10:00:00',
      data: { a: 1, s: 'text' },
      readings: [{ metric_name: 'b', metric_value: 2, unit: 'V' }, { metric_name: 'n', metric_value: null }],
      metric_name: 'c', metric_value: 3, unit: 'A',
    }, 3, 2, d.id);
    const at = Date.UTC(2026, 0, 13, 10);
    expect(await stored(d.id)).toEqual([
      { metric_name: 'a', metric_value: 1, unit: null, time: at },
      { metric_name: 'b', metric_value: 2, unit: 'V', time: at },
      { metric_name: 'c', metric_value: 3, unit: 'A', time: at },
    ]);
  });

  it('keeps full double precision and the extremes of the accepted metric name alphabet', async () => {
    const d = await device();
    await ingestOk(d.token, { data: { 'env.room-1:temp/avg_5m': 0.1 + 0.2, big: 1e300, tiny: -5e-324 } }, 3, 0, d.id);
    const rows = await stored(d.id);
    expect(rows.map((r) => [r.metric_name, r.metric_value])).toEqual([['big', 1e300], ['env.room-1:temp/avg_5m', 0.1 + 0.2], ['tiny', -5e-324]]);
  });
});

describe('recorded_at forms', () => {
  const at = Date.UTC(2026, 0, 10, 5, 6, 7);
  it.each([
    ['"YYYY-MM-DD HH:MM:SS", read as UTC', '2026-01-10 05:06:07', at],
    ['ISO 8601 with Z', '2026-01-10T05:06:07Z', at],
    ['ISO 8601 with a positive offset and fractional seconds', '2026-01-10T07:06:07.250+02:00', at + 250],
    ['ISO 8601 with a negative offset and one fractional digit', '2026-01-10T00:06:07.5-05:00', at + 500],
    ['ISO 8601 with microseconds and Z', '2026-01-10T05:06:07.123456Z', at + 123],
    ['epoch seconds', at / 1000, at],
    ['epoch milliseconds', at + 250, at + 250],
  ])('accepts %s', async (_label, recordedAt, expected) => {
    const d = await device();
    // The same time through the flat form's top level and a batch reading's own recorded_at.
    await ingestOk(d.token, { data: { x: 1 }, readings: [{ metric_name: 'y', metric_value: 2, recorded_at: recordedAt }], recorded_at: recordedAt }, 2, 0, d.id);
    const rows = await stored(d.id);
    expect(rows.map((r) => [r.metric_name, r.time])).toEqual([['x', expected], ['y', expected]]);
  });

  it('uses server time for every form when recorded_at is absent', async () => {
    clock = START + 42_123;
    try {
      const d = await device();
      await ingestOk(d.token, { data: { a: 1 }, readings: [{ metric_name: 'b', metric_value: 2 }], metric_name: 'c', metric_value: 3 }, 3, 0, d.id);
      expect((await stored(d.id)).map((r) => r.time)).toEqual([START + 42_123, START + 42_123, START + 42_123]);
    } finally {
      clock = START;
    }
  });

  it('gives a batch reading without its own recorded_at server time when the body has none either', async () => {
    clock = START + 7_000;
    try {
      const d = await device();
      await ingestOk(d.token, { readings: [
        { metric_name: 'own', metric_value: 1, recorded_at: '2026-01-01 00:00:00' },
        { metric_name: 'server', metric_value: 2 },
      ] }, 2, 0, d.id);
      expect((await stored(d.id)).map((r) => [r.metric_name, r.time])).toEqual([['own', Date.UTC(2026, 0, 1)], ['server', START + 7_000]]);
    } finally {
      clock = START;
    }
  });
});
