import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

// SPEC §4.2 reads: device detail, telemetry buckets, GPS track and alerts, over known readings. The clock is
// fixed so that the default ranges ("the last 24 hours") are known too.
const NOW = Date.parse('2025-06-01T12:00:00Z');
const TIME_ERROR = 'from and to must be ISO 8601 times or epoch seconds/milliseconds, with from before to.';
const BUCKET_ERROR = 'bucket must be seconds, or a number with s, m, h or d, e.g. 5m.';
const POINTS_ERROR = 'That range and bucket give more than 5000 points; choose a larger bucket.';
const at = (hms: string) => `2025-06-01T${hms}.000Z`;
// temp readings: two in minute 10:00, one each in 10:01, 10:04, 10:07, and one at 11:00.
const TEMPS: [string, number][] = [['10:00:10', 10], ['10:00:50', 20], ['10:01:30', 30], ['10:04:00', 40], ['10:07:00', 50], ['11:00:00', 60]];

describe('mobile API reads: device detail, telemetry buckets, GPS track and alerts', () => {
  let t: TestService;
  let device: { id: number };
  let token: string;

  const get = async (path: string) => {
    const res = await fetch(t.baseUrl + path, { headers: { Authorization: `Bearer ${token}` } });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text) };
  };
  const telemetry = async (query: string) => get(`/api/mobile/devices/${device.id}/telemetry?${query}`);
  const points = async (query: string) => {
    const r = await telemetry(query);
    expect(r.status, r.text).toBe(200);
    return r.json.data.points;
  };

  beforeAll(async () => {
    t = await startTestService({}, { now: () => NOW });
    const d = await t.newDevice('health', 'reader@example.com');
    device = d;
    const readings = TEMPS.map(([hms, v]) => ({ metric_name: 'temp', metric_value: v, unit: 'C', recorded_at: `2025-06-01T${hms}Z` }));
    readings.push({ metric_name: 'hr', metric_value: 99, unit: 'bpm', recorded_at: '2025-06-01T10:00:10Z' });
    expect((await t.post('/api/telemetry-ingest', { readings }, d.token)).status).toBe(200);
    // GPS fixes posted out of time order; the one at 11:30 falls outside the 10:00-11:00 range below.
    const fixes: [string, number, object?][] = [['10:02:00', 3], ['10:00:00', 1, { altitude_m: 12, speed_kmh: 4.5, heading_deg: 90, accuracy_m: 3 }], ['10:01:00', 2], ['11:30:00', 9]];
    for (const [hms, n, extra] of fixes) {
      const body = { data: { speed: n }, gps: { lat: 50 + n / 10, lng: 8, ...extra }, recorded_at: `2025-06-01 ${hms}` };
      expect((await t.post('/api/telemetry-ingest', body, d.token)).status).toBe(200);
    }
    const login = await t.post('/api/mobile/login', { email: 'reader@example.com', password: 'correct horse battery' });
    token = login.json.data.token;
  });
  afterAll(async () => { await t?.close(); });

  it('returns a device\'s detail with its latest values and no open alerts', async () => {
    const r = await get(`/api/mobile/devices/${device.id}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'ok', data: { device: {
      id: device.id, name: expect.any(String), module: 'health', status: 'online',
      last_seen_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      latest: {
        temp: { value: 60, unit: 'C', recorded_at: at('11:00:00') },
        hr: { value: 99, unit: 'bpm', recorded_at: at('10:00:10') },
        speed: { value: 9, unit: null, recorded_at: at('11:30:00') }, // the newest, though not the last posted
      },
      open_alerts: 0,
    } } });
  });

  it('aggregates a metric into one-minute buckets of avg, min, max and count', async () => {
    const r = await telemetry(`metric=temp&from=${at('10:00:00')}&to=${at('10:10:00')}&bucket=1m`);
    expect(r.json).toEqual({ status: 'ok', data: {
      metric: 'temp', bucket_s: 60, from: at('10:00:00'), to: at('10:10:00'),
      points: [
        { t: at('10:00:00'), avg: 15, min: 10, max: 20, count: 2 },
        { t: at('10:01:00'), avg: 30, min: 30, max: 30, count: 1 },
        { t: at('10:04:00'), avg: 40, min: 40, max: 40, count: 1 },
        { t: at('10:07:00'), avg: 50, min: 50, max: 50, count: 1 },
      ],
    } });
  });

  it('reads the bucket as plain seconds or with an s, m, h or d unit', async () => {
    const fiveMinutes = [{ t: at('10:00:00'), avg: 25, min: 10, max: 40, count: 4 }, { t: at('10:05:00'), avg: 50, min: 50, max: 50, count: 1 }];
    for (const bucket of ['5m', '300', '300s']) {
      expect(await points(`metric=temp&from=${at('10:00:00')}&to=${at('10:10:00')}&bucket=${bucket}`)).toEqual(fiveMinutes);
    }
    const hours = [{ t: at('10:00:00'), avg: 30, min: 10, max: 50, count: 5 }, { t: at('11:00:00'), avg: 60, min: 60, max: 60, count: 1 }];
    for (const bucket of ['1h', '3600', '60m']) {
      expect(await points(`metric=temp&from=${at('10:00:00')}&to=${at('12:00:00')}&bucket=${bucket}`)).toEqual(hours);
    }
    expect(await points(`metric=temp&from=2025-06-01&to=2025-06-02&bucket=1d`)).toEqual([{ t: at('00:00:00'), avg: 35, min: 10, max: 60, count: 6 }]);
  });

  it('includes readings at from and leaves out readings at to', async () => {
    expect(await points(`metric=temp&from=${at('10:00:50')}&to=${at('11:00:00')}&bucket=1h`)).toEqual([{ t: at('10:00:00'), avg: 35, min: 20, max: 50, count: 4 }]);
    expect(await points(`metric=temp&from=${at('11:00:00')}&to=${at('11:00:01')}&bucket=1`)).toEqual([{ t: at('11:00:00'), avg: 60, min: 60, max: 60, count: 1 }]);
    expect(await points(`metric=nothing_here&from=${at('10:00:00')}&to=${at('12:00:00')}&bucket=1h`)).toEqual([]);
  });

  it('accepts epoch seconds, epoch milliseconds and UTC offsets for from and to', async () => {
    const expected = await points(`metric=temp&from=${at('10:00:00')}&to=${at('10:10:00')}&bucket=1m`);
    const seconds = Date.parse(at('10:00:00')) / 1000;
    expect(await points(`metric=temp&from=${seconds}&to=${(seconds + 600) * 1000}&bucket=1m`)).toEqual(expected);
    expect(await points(`metric=temp&from=${encodeURIComponent('2025-06-01T12:00:00+02:00')}&to=2025-06-01T10:10Z&bucket=1m`)).toEqual(expected);
    // An unencoded "+" arrives as a space; the offset still counts.
    expect(await points('metric=temp&from=2025-06-01T12:00:00+02:00&to=2025-06-01T05:10:00-05:00&bucket=1m')).toEqual(expected);
  });

  it('defaults to the last 24 hours in buckets of about 200 points, aligned to whole buckets', async () => {
    const r = await telemetry('metric=temp');
    expect(r.json.data).toMatchObject({ bucket_s: 432, from: '2025-05-31T12:00:00.000Z', to: '2025-06-01T12:00:00.000Z' });
    const pts: { t: string; count: number }[] = r.json.data.points;
    expect(pts.reduce((n, p) => n + p.count, 0)).toBe(6);
    for (const p of pts) expect((Date.parse(p.t) - Date.UTC(2000, 0, 1)) % 432_000).toBe(0);
    expect((await telemetry(`metric=temp&from=${at('10:00:00')}&to=${at('10:10:00')}`)).json.data.bucket_s).toBe(3); // 600 s / 200
  });

  it('answers 400 for a missing metric, bad times, from not before to, a bad bucket and too many points', async () => {
    const range = `from=${at('10:00:00')}&to=${at('10:10:00')}`;
    const cases: [string, string][] = [
      [range, 'metric is required, e.g. ?metric=heart_rate&from=2026-01-01T00:00:00Z&to=...&bucket=5m.'],
      [`metric=&${range}`, 'metric is required, e.g. ?metric=heart_rate&from=2026-01-01T00:00:00Z&to=...&bucket=5m.'],
      ...['yesterday', '2025-06-01T10:00:00', '2025-02-30', '2025-13-01T00:00:00Z', '2025-06-01T25:00:00Z', '-5', '1e9', '99999999999999999']
        .map((from): [string, string] => [`metric=temp&from=${encodeURIComponent(from)}&to=${at('10:10:00')}`, TIME_ERROR]),
      [`metric=temp&from=${at('10:00:00')}&to=9999999999999999`, TIME_ERROR], // beyond the largest Date
      [`metric=temp&from=${at('10:00:00')}&to=${at('10:00:00')}`, TIME_ERROR],
      [`metric=temp&from=${at('10:10:00')}&to=${at('10:00:00')}`, TIME_ERROR],
      ['metric=temp&from=2025-06-01T12:00:00Z', TIME_ERROR], // from = the default to (now)
      ...['0', 'abc', '5x', '-5', '1.5m', '5M', '5 m', '99999999']
        .map((bucket): [string, string] => [`metric=temp&${range}&bucket=${encodeURIComponent(bucket)}`, BUCKET_ERROR]),
      [`metric=temp&from=${at('10:00:00')}&to=${at('11:23:21')}&bucket=1`, POINTS_ERROR], // 5001 points
    ];
    for (const [query, error] of cases) {
      const r = await telemetry(query);
      expect({ query, status: r.status, json: r.json }).toEqual({ query, status: 400, json: { status: 'error', error } });
    }
    expect((await telemetry(`metric=temp&from=${at('10:00:00')}&to=${at('11:23:20')}&bucket=1`)).status).toBe(200); // 5000 points
    expect((await telemetry(`metric=temp&from=${at('10:00:00')}&to=${at('11:23:21')}&bucket=2`)).status).toBe(200);
  });

  it('returns the GPS track in time order, from included and to left out', async () => {
    const track = async (query: string) => (await get(`/api/mobile/devices/${device.id}/gps?${query}`)).json.data.points;
    const all = await track(`from=${at('10:00:00')}&to=${at('11:00:00')}`);
    expect(all).toEqual([
      { t: at('10:00:00'), lat: 50.1, lng: 8, altitude_m: 12, speed_kmh: 4.5, heading_deg: 90, accuracy_m: 3 },
      { t: at('10:01:00'), lat: 50.2, lng: 8, altitude_m: null, speed_kmh: null, heading_deg: null, accuracy_m: null },
      { t: at('10:02:00'), lat: 50.3, lng: 8, altitude_m: null, speed_kmh: null, heading_deg: null, accuracy_m: null },
    ]);
    expect((await track(`from=${at('10:01:00')}&to=${at('10:02:00')}`)).map((p: { lat: number }) => p.lat)).toEqual([50.2]);
    expect((await track('')).map((p: { t: string }) => p.t)).toEqual([at('10:00:00'), at('10:01:00'), at('10:02:00'), at('11:30:00')]);
    expect(await track(`from=${at('11:31:00')}`)).toEqual([]);
    for (const query of ['from=nonsense', `from=${at('10:02:00')}&to=${at('10:01:00')}`, 'to=2025-06-01T10:00:00']) {
      const r = await get(`/api/mobile/devices/${device.id}/gps?${query}`);
      expect({ query, status: r.status, json: r.json }).toEqual({ query, status: 400, json: { status: 'error', error: TIME_ERROR } });
    }
  });

  it('lists no alerts until the alert engine lands, and refuses an unknown status', async () => {
    for (const query of ['', '?status=open', '?status=acknowledged', '?status=resolved']) {
      const r = await get(`/api/mobile/alerts${query}`);
      expect({ query, status: r.status, text: r.text }).toEqual({ query, status: 200, text: '{"status":"ok","data":{"alerts":[]}}' });
    }
    for (const query of ['?status=bogus', '?status=OPEN', '?status=']) {
      const r = await get(`/api/mobile/alerts${query}`);
      expect({ query, status: r.status, json: r.json }).toEqual({ query, status: 400, json: { status: 'error', error: 'status must be open, acknowledged or resolved.' } });
    }
    const ack = await t.post('/api/mobile/alerts/1/acknowledge', {}, token);
    expect({ status: ack.status, json: ack.json }).toEqual({ status: 404, json: { status: 'error', error: 'Not found.' } });
  });
});
