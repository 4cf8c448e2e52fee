// POST /api/telemetry-ingest error answers over real HTTP: 401 (every way a token can be wrong), 400
// (every validation rule with its boundary) and 413 for too many readings, each storing nothing.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteDevice, rotateDeviceToken } from '../dist/src/auth/device-registry.js';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const OWNER = 'errors-owner@example.com';
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const DAY = 24 * 3600_000;
const VALID = { data: { heart_rate: 70 } };

let t: TestService;
beforeAll(async () => { t = await startTestService({}, { now: () => NOW }); });
afterAll(async () => { await t?.close(); });

const device = () => t.newDevice('health', OWNER);

/** Everything ingestion can write for a device: all must stay empty after a refused request. */
async function storedFor(deviceId: number) {
  const q = async (sql: string) => Number((await t.db.query(sql, [deviceId])).rows[0].n);
  const dev = (await t.db.query('SELECT status, last_seen_at FROM devices WHERE id = $1', [deviceId])).rows[0];
  return {
    telemetry: await q('SELECT count(*) AS n FROM telemetry WHERE device_id = $1'),
    gps: await q('SELECT count(*) AS n FROM gps_points WHERE device_id = $1'),
    events: await q('SELECT count(*) AS n FROM module_events WHERE device_id = $1'),
    latest: await q('SELECT count(*) AS n FROM latest_metrics WHERE device_id = $1'),
    status: dev.status as string,
    lastSeen: dev.last_seen_at as Date | null,
  };
}
const NOTHING = { telemetry: 0, gps: 0, events: 0, latest: 0, status: 'offline', lastSeen: null };

async function expect400(body: unknown, ...phrases: string[]) {
  const d = await device();
  const r = await t.post(INGEST, body, d.token);
  expect(r.status, r.text).toBe(400);
  expect(Object.keys(r.json)).toEqual(['error']);
  for (const p of phrases) expect(r.json.error).toContain(p);
  expect(await storedFor(d.id)).toEqual(NOTHING);
  return r.json.error as string;
}

async function expectAccepted(body: unknown, inserted: number) {
  const d = await device();
  const r = await t.post(INGEST, body, d.token);
  expect(r.status, r.text).toBe(200);
  expect(r.json).toEqual({ ok: true, status: 'ok', inserted, skipped: 0, device_id: d.id });
  return d;
}

function expect401(r: { status: number; json: unknown; headers: Headers }) {
  expect(r.status).toBe(401);
  expect(r.json).toEqual({ error: 'Invalid device token.' });
  expect(r.headers.get('www-authenticate')).toBe('Bearer');
}

describe('401 Invalid device token', () => {
  const hex = (n: number) => crypto.randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);
  it.each([
    ['no Authorization header', undefined],
    ['a Basic scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['Bearer with no token', 'Bearer '],
    ['a 63-hex token', `Bearer ${hex(63)}`],
    ['a 65-hex token', `Bearer ${hex(65)}`],
    ['64 characters that are not hex', `Bearer ${'g'.repeat(64)}`],
    ['an unknown 64-hex token', `Bearer ${hex(64)}`],
  ])('answers %s with 401 and WWW-Authenticate: Bearer, storing nothing', async (_label, authorization) => {
    const before = await t.db.query('SELECT (SELECT count(*) FROM telemetry) AS t, (SELECT count(*) FROM module_events) AS e');
    const r = await t.post(INGEST, VALID, undefined, authorization === undefined ? {} : { Authorization: authorization });
    expect401(r);
    const after = await t.db.query('SELECT (SELECT count(*) FROM telemetry) AS t, (SELECT count(*) FROM module_events) AS e');
    expect(after.rows).toEqual(before.rows);
  });

  it('refuses an unknown token again when it is asked twice (the negative cache answers the same)', async () => {
    const token = crypto.randomBytes(32).toString('hex');
    expect401(await t.post(INGEST, VALID, token));
    expect401(await t.post(INGEST, VALID, token));
  });

  it('accepts the scheme in any case, as RFC 7235 says', async () => {
    const d = await device();
    const r = await t.post(INGEST, VALID, undefined, { Authorization: `bEaReR ${d.token}` });
    expect(r.status).toBe(200);
  });

  // At once: the very first request after the change committed is refused, cached token or not,
  // because each batch re-checks its tokens under the device row lock before it commits.
  async function refusedAtOnce(token: string): Promise<void> {
    expect401(await t.post('/api/webhooks/heartbeat', '', token));
  }

  it('refuses the token of a deleted device, even one accepted and cached just before', async () => {
    const d = await device();
    expect((await t.post(INGEST, VALID, d.token)).status).toBe(200);
    await deleteDevice(t.db, d.id);
    await refusedAtOnce(d.token);
    expect401(await t.post(INGEST, { data: { heart_rate: 99 } }, d.token));
    const rows = await t.db.query('SELECT metric_value FROM telemetry WHERE device_id = $1', [d.id]);
    expect(rows.rows).toEqual([{ metric_value: 70 }]);
  });

  it('accepts the new token at once after rotation and refuses the old one', async () => {
    const d = await device();
    expect((await t.post(INGEST, VALID, d.token)).status).toBe(200);
    const rotated = await rotateDeviceToken(t.db, d.id);
    expect(rotated.token).not.toBe(d.token);
    const r = await t.post(INGEST, { data: { heart_rate: 2 } }, rotated.token);
    expect(r.json).toEqual({ ok: true, status: 'ok', inserted: 1, skipped: 0, device_id: d.id });
    await refusedAtOnce(d.token);
    expect401(await t.post(INGEST, { data: { heart_rate: 1 } }, d.token));
    const rows = await t.db.query('SELECT metric_value FROM telemetry WHERE device_id = $1 ORDER BY metric_value', [d.id]);
    expect(rows.rows).toEqual([{ metric_value: 2 }, { metric_value: 70 }]);
  });

  it('checks the token before the body: a bad token with invalid JSON gets 401, not 400', async () => {
    expect401(await t.post(INGEST, '{not json', crypto.randomBytes(32).toString('hex')));
  });
});

describe('400 for bodies that are not telemetry', () => {
  it('answers invalid JSON with 400 and names the three forms', async () => {
    await expect400('{"data": {"x": 1', 'Body is not valid JSON', '"data"', '"readings"', '"metric_name"');
  });

  it.each([['an array', '[{"metric_name":"x","metric_value":1}]'], ['a number', '42'], ['a string', '"x"'], ['null', 'null']])(
    'answers a body that is %s with 400 "must be a JSON object"', async (_label, body) => {
      await expect400(body, 'Body must be a JSON object');
    });

  it.each([
    ['an empty object', {}],
    ['flat data with only strings, booleans and null', { data: { a: 'x', b: true, c: null } }],
    ['an empty readings list', { readings: [] }],
    ['a single form whose value is a string', { metric_name: 'x', metric_value: '12' }],
  ])('answers %s with 400 naming all three accepted forms with an example of each', async (_label, body) => {
    const msg = await expect400(body, 'No numeric metrics');
    expect(msg).toMatch(/flat \{"data":\{.+\}/);
    expect(msg).toMatch(/batch \{"readings":\[\{"metric_name":.+"metric_value":/);
    expect(msg).toMatch(/single \{"metric_name":.+"metric_value":/);
  });
});

describe('400 for a bad recorded_at, with its boundaries', () => {
  it.each([
    ['an unparseable string', 'yesterday', 'unknown format'],
    ['a date that does not exist', '2026-02-30 00:00:00', 'not a real date'],
    ['a boolean', true, 'must be'],
    ['one second before 2000-01-01', '1999-12-31 23:59:59', 'before 2000-01-01'],
    ['epoch seconds before 2000', 946684799, 'before 2000-01-01'],
    ['one millisecond more than a day ahead', NOW + DAY + 1, 'more than one day in the future'],
  ])('refuses %s', async (_label, recordedAt, phrase) => {
    await expect400({ data: { x: 1 }, recorded_at: recordedAt }, 'recorded_at', phrase);
  });

  it('refuses a bad recorded_at on one batch reading, storing none of the others', async () => {
    await expect400({ readings: [{ metric_name: 'a', metric_value: 1 }, { metric_name: 'b', metric_value: 2, recorded_at: '1999-01-01T00:00:00Z' }] }, 'before 2000-01-01');
  });

  it('accepts exactly 2000-01-01 00:00:00 and exactly now + 1 day', async () => {
    const d = await expectAccepted({ readings: [
      { metric_name: 'a', metric_value: 1, recorded_at: '2000-01-01 00:00:00' },
      { metric_name: 'b', metric_value: 2, recorded_at: NOW + DAY },
    ] }, 2);
    const rows = await t.db.query('SELECT metric_name, time FROM telemetry WHERE device_id = $1 ORDER BY metric_name', [d.id]);
    expect(rows.rows.map((r) => (r.time as Date).getTime())).toEqual([Date.UTC(2000, 0, 1), NOW + DAY]);
  });
});

describe('400 for a bad metric name', () => {
  it('accepts a 64-character name and refuses 65 characters', async () => {
    await expectAccepted({ data: { ['m'.repeat(64)]: 1 } }, 1);
    await expect400({ data: { ['m'.repeat(65)]: 1 } }, 'Metric name', 'is invalid', '1 to 64 characters');
  });

  it.each([
    ['a space', { data: { 'heart rate': 1 } }],
    ['a dollar sign', { readings: [{ metric_name: 'temp$', metric_value: 1 }] }],
    ['an empty name', { metric_name: '', metric_value: 1 }],
    ['a non-ASCII letter', { data: { 'température': 1 } }],
  ])('refuses a name with %s', async (_label, body) => {
    await expect400(body, 'Metric name', 'is invalid');
  });
});

describe('400 for bad GPS, with its boundaries', () => {
  it.each([
    ['lat 90 and lng -180', { lat: 90, lng: -180 }],
    ['lat -90 and lng 180', { lat: -90, lng: 180 }],
  ])('accepts %s', async (_label, gps) => {
    const d = await expectAccepted({ data: { x: 1 }, gps }, 1);
    const rows = await t.db.query('SELECT lat, lng FROM gps_points WHERE device_id = $1', [d.id]);
    expect(rows.rows).toEqual([gps]);
  });

  it.each([
    ['lat 90.0001', { data: { x: 1 }, gps: { lat: 90.0001, lng: 0 } }, 'latitude'],
    ['lat -90.0001', { data: { x: 1 }, gps: { lat: -90.0001, lng: 0 } }, 'latitude'],
    ['lng -180.1', { data: { x: 1 }, gps: { lat: 0, lng: -180.1 } }, 'longitude'],
    ['lng 180.1', { data: { x: 1 }, gps: { lat: 0, lng: 180.1 } }, 'longitude'],
    ['data.latitude 91', { data: { x: 1, latitude: 91, longitude: 0 } }, 'latitude'],
    ['data.lng -181', { data: { x: 1, lat: 0, lng: -181 } }, 'longitude'],
    ['data.latitude without a longitude', { data: { x: 1, latitude: 10 } }, 'both latitude and longitude'],
  ])('refuses %s', async (_label, body, phrase) => {
    await expect400(body, 'GPS', phrase);
  });
});

describe('413 for more than MAX_READINGS_PER_REQUEST readings (default 5000)', () => {
  const batch = (n: number) => ({ readings: Array.from({ length: n }, (_, i) => ({ metric_name: `m${i}`, metric_value: i })) });

  it('accepts 4999 and 5000 readings and stores them all', async () => {
    for (const n of [4999, 5000]) {
      const d = await expectAccepted(batch(n), n);
      const rows = await t.db.query('SELECT count(*)::int AS n FROM telemetry WHERE device_id = $1', [d.id]);
      expect(rows.rows[0].n).toBe(n);
    }
  });

  it('refuses 5001 readings with 413, storing nothing', async () => {
    const d = await device();
    const r = await t.post(INGEST, batch(5001), d.token);
    expect(r.status).toBe(413);
    expect(r.json).toEqual({ error: 'More than 5000 readings in one request; split them over several requests.' });
    expect(await storedFor(d.id)).toEqual(NOTHING);
  });

  it('counts the readings of all forms together, non-numeric ones included', async () => {
    const d = await device();
    const data = Object.fromEntries(Array.from({ length: 2500 }, (_, i) => [`d${i}`, i % 2 ? i : 'text']));
    const r = await t.post(INGEST, { data, ...batch(2500), metric_name: 'one', metric_value: 1 }, d.token);
    expect(r.status).toBe(413);
    expect(await storedFor(d.id)).toEqual(NOTHING);
  });
});
