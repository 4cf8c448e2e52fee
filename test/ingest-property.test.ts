// Property-based tests of POST /api/telemetry-ingest over real HTTP and PostgreSQL: whatever the body and
// headers, the answer is a JSON 200/4xx on a connection that stays up, and a 200 stores exactly its readings.
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const MIN_MS = Date.UTC(2000, 0, 1);
const NAME = /^[A-Za-z0-9_.:/-]{1,64}$/;
const GPS_KEYS = new Set(['lat', 'lng', 'latitude', 'longitude']);

type AuthKind = 'exact' | 'missing' | 'basic' | 'random' | 'upper' | 'double-space' | 'padded' | 'lower-scheme';
/** How each Authorization variant must be answered: 'ok' as the body deserves, 401, or either of the two. */
const AUTH_EXPECT: Record<AuthKind, 'ok' | 401 | 'either'> = {
  exact: 'ok', missing: 401, basic: 401, random: 401, upper: 401,
  'lower-scheme': 'ok', 'double-space': 'either', padded: 'either',
};

const header = fc.string({ maxLength: 80 }); // printable ASCII: what fetch lets through
// Mostly the valid token, so that most runs reach the body and the database.
const auth = fc.record({
  kind: fc.oneof({ weight: 6, arbitrary: fc.constant<AuthKind>('exact') }, fc.constantFrom<AuthKind>(...Object.keys(AUTH_EXPECT) as AuthKind[])),
  junk: header,
});
const contentType = fc.oneof(fc.constant('application/json'), fc.constant('text/plain; charset=latin1'), fc.constant(''), header);

function authHeader(kind: AuthKind, junk: string, token: string): string | undefined {
  switch (kind) {
    case 'exact': return `Bearer ${token}`;
    case 'missing': return undefined;
    case 'basic': return `Basic ${Buffer.from(`x:${token}`).toString('base64')}`;
    case 'random': return junk;
    case 'upper': return `Bearer ${token.toUpperCase()}`;
    case 'double-space': return `Bearer  ${token}`;
    case 'padded': return `  Bearer ${token} `;
    case 'lower-scheme': return `bearer ${token}`;
  }
}

// recorded_at in every accepted form, with the epoch ms the server must store.
const pad = (n: number, w = 2) => String(n).padStart(w, '0');
function isoWithOffset(ms: number, offsetMin: number): string {
  const d = new Date(ms + offsetMin * 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const off = Math.abs(offsetMin);
  return `${d.toISOString().slice(0, 23)}${sign}${pad(Math.floor(off / 60))}:${pad(off % 60)}`;
}
const validTime = fc.tuple(fc.integer({ min: MIN_MS, max: Date.now() - 60_000 }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: -720, max: 840 }))
  .map(([ms, form, offsetMin]): { value: string | number; ms: number } => {
    const s = Math.floor(ms / 1000) * 1000;
    switch (form) {
      case 0: return { value: new Date(s).toISOString().replace('T', ' ').slice(0, 19), ms: s };
      case 1: return { value: new Date(ms).toISOString(), ms };
      case 2: return { value: isoWithOffset(ms, offsetMin), ms };
      case 3: return { value: s / 1000, ms: s };
      default: return { value: ms, ms };
    }
  });

const name = fc.stringMatching(NAME).filter((n) => !GPS_KEYS.has(n));
const nonNumber = fc.oneof(fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }), fc.constant({}));
const value = fc.oneof({ weight: 3, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) }, { weight: 2, arbitrary: fc.integer() }, { weight: 2, arbitrary: nonNumber });
const unit = fc.string({ maxLength: 32 });
const gps = fc.record({
  lat: fc.double({ min: -90, max: 90, noNaN: true }), lng: fc.double({ min: -180, max: 180, noNaN: true }),
  altitude_m: fc.double({ noNaN: true, noDefaultInfinity: true }), speed_kmh: fc.nat(300),
}, { requiredKeys: ['lat', 'lng'] });

/** A body made of the three forms with valid names, times and units; values of every JSON type. */
const validBody = fc.record({
  recorded_at: validTime,
  data: fc.uniqueArray(fc.tuple(name, value), { maxLength: 5, selector: ([k]) => k }),
  readings: fc.array(fc.record({ metric_name: name, metric_value: value, unit, recorded_at: validTime }, { requiredKeys: ['metric_name', 'metric_value'] }), { maxLength: 5 }),
  single: fc.record({ metric_name: name, metric_value: value, unit }, { requiredKeys: ['metric_name', 'metric_value'] }),
  gps,
}, { requiredKeys: [] });

type ValidBody = typeof validBody extends fc.Arbitrary<infer T> ? T : never;
type Expected = { name: string; value: number; unit: string | null; ms: number | null };

/** The wire body, and the readings (in any order) that a 200 must have stored; ms null = server time. */
function build(b: ValidBody) {
  const body: Record<string, unknown> = {};
  const expected: Expected[] = [];
  let skipped = 0;
  const top = b.recorded_at?.ms ?? null;
  const take = (n: string, v: unknown, u: string | undefined, ms: number | null) => {
    if (typeof v === 'number') expected.push({ name: n, value: v, unit: u ?? null, ms }); else skipped++;
  };
  if (b.recorded_at) body.recorded_at = b.recorded_at.value;
  if (b.data) {
    body.data = Object.fromEntries(b.data);
    for (const [n, v] of b.data) take(n, v, undefined, top);
  }
  if (b.readings) {
    body.readings = b.readings.map((r) => ({ ...r, recorded_at: r.recorded_at?.value }));
    for (const r of b.readings) take(r.metric_name, r.metric_value, r.unit, r.recorded_at?.ms ?? top);
  }
  if (b.single) {
    Object.assign(body, b.single);
    take(b.single.metric_name, b.single.metric_value, b.single.unit, top);
  }
  if (b.gps) body.gps = b.gps;
  // What the server sees: JSON turns -0 into 0 and drops undefined fields.
  return { body: JSON.stringify(body), expected: JSON.parse(JSON.stringify(expected)) as Expected[], skipped, gps: b.gps ? 1 : 0 };
}

/** Near-valid bodies: the three forms with names, values, times, units and GPS of any kind. */
const anything = fc.jsonValue({ maxDepth: 2 });
const looseName = fc.oneof(name, fc.string({ maxLength: 70 }), fc.string({ unit: 'binary', maxLength: 4 }), fc.constantFrom('lat', 'lng', 'latitude', 'longitude', '', 'x'.repeat(65), 'a b'));
const looseValue = fc.oneof(value, anything, fc.double());
const looseTime = fc.oneof(validTime.map((t) => t.value), fc.string({ maxLength: 30 }), fc.double(), fc.integer(), anything,
  fc.constantFrom('1999-12-31 23:59:59', '2026-02-30 10:00:00', '2020-01-01T00:00:00', new Date(Date.now() + 2 * 86_400_000).toISOString(), 1e11 - 1, 1e11));
const looseGps = fc.oneof(gps, fc.record({ lat: fc.double(), lng: fc.double() }), anything);
const nearValidBody = fc.record({
  data: fc.dictionary(looseName, looseValue, { maxKeys: 5 }),
  readings: fc.array(fc.record({ metric_name: looseName, metric_value: looseValue, unit: fc.oneof(unit, anything), recorded_at: looseTime }, { requiredKeys: [] }), { maxLength: 4 }),
  metric_name: looseName, metric_value: looseValue, unit: fc.oneof(unit, fc.string({ unit: 'binary', maxLength: 40 })),
  recorded_at: looseTime, gps: looseGps,
}, { requiredKeys: [] }).map((b) => JSON.stringify(b));
const rawBody = fc.oneof(anything.map((v) => JSON.stringify(v)), fc.string({ maxLength: 60 }), nearValidBody);

describe('ingestion under arbitrary input', () => {
  let t: TestService;
  const owner = `property-${Date.now()}@example.com`;
  beforeAll(async () => {
    t = await startTestService({ batchMaxWaitMs: 1 });
    await t.newDevice('home_infra', owner); // creates the owner once; devices per run are then cheap
  });
  afterAll(async () => { await t?.close(); });

  async function send(body: string | Buffer, authorization: string | undefined, type: string) {
    const headers: Record<string, string> = { 'Content-Type': type };
    if (authorization !== undefined) headers.Authorization = authorization;
    const res = await fetch(t.baseUrl + INGEST, { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: JSON.parse(text) as any };
  }

  async function stored(deviceId: number) {
    const r = await t.db.query(`SELECT
        (SELECT count(*)::int FROM telemetry WHERE device_id = $1) AS telemetry,
        (SELECT count(*)::int FROM gps_points WHERE device_id = $1) AS gps,
        (SELECT count(*)::int FROM module_events WHERE device_id = $1 AND event_type = 'telemetry') AS events`, [deviceId]);
    return r.rows[0] as { telemetry: number; gps: number; events: number };
  }

  /** The invariant every answer keeps: JSON, 200 or a 4xx with an error string, and storage matching it. */
  async function expectConsistent(r: Awaited<ReturnType<typeof send>>, deviceId: number) {
    expect(r.headers.get('content-type')).toBe('application/json');
    const s = await stored(deviceId);
    if (r.status === 200) {
      expect(r.json).toMatchObject({ ok: true, status: 'ok', device_id: deviceId });
      expect(r.json.inserted).toBeGreaterThan(0);
      expect(s).toMatchObject({ telemetry: r.json.inserted, events: 1 });
    } else {
      expect([400, 401, 413]).toContain(r.status);
      expect(Object.keys(r.json)).toEqual(['error']);
      expect(typeof r.json.error).toBe('string');
      if (r.status === 401) expect(r.headers.get('www-authenticate')).toBe('Bearer');
      expect(s).toEqual({ telemetry: 0, gps: 0, events: 0 });
    }
  }

  it('answers any JSON or text body with any headers by JSON 200 or 4xx, and a 200 stores exactly its readings', async () => {
    await fc.assert(fc.asyncProperty(rawBody, auth, contentType, async (body, a, type) => {
      const d = await t.newDevice('home_infra', owner);
      const r = await send(body, authHeader(a.kind, a.junk, d.token), type);
      if (AUTH_EXPECT[a.kind] === 401) expect(r.status).toBe(401);
      await expectConsistent(r, d.id);
    }), { numRuns: 250 });
  });

  it('stores every numeric reading of a valid body once, with its time and unit, and counts the rest as skipped', async () => {
    await fc.assert(fc.asyncProperty(validBody, auth, contentType, async (b, a, type) => {
      const d = await t.newDevice('home_infra', owner);
      const { body, expected, skipped, gps: gpsRows } = build(b);
      const before = Date.now();
      const r = await send(body, authHeader(a.kind, a.junk, d.token), type);
      const after = Date.now();
      await expectConsistent(r, d.id);
      const want = AUTH_EXPECT[a.kind];
      if (want === 401 || (want === 'either' && r.status === 401)) return;
      if (expected.length === 0) {
        expect(r.status).toBe(400);
        return;
      }
      expect(r.json).toEqual({ ok: true, status: 'ok', inserted: expected.length, skipped, device_id: d.id });
      const rows = await t.db.query(
        `SELECT metric_name AS name, metric_value AS value, unit, (extract(epoch FROM time) * 1000)::float8 AS ms
           FROM telemetry WHERE device_id = $1`, [d.id]);
      // Server time (no recorded_at) lies between sending and answering; rounded to the stored precision.
      const got = rows.rows.map((row) => ({ ...row, ms: Math.round(row.ms) }));
      const norm = (e: Expected) => `${e.name}|${e.value}|${e.unit}`;
      expect(got.map(norm).sort()).toEqual(expected.map(norm).sort());
      for (const e of expected) {
        const match = got.filter((g) => norm(g) === norm(e));
        if (e.ms !== null) expect(match.map((g) => g.ms)).toContain(e.ms);
        else expect(match.some((g) => g.ms >= before - 1 && g.ms <= after + 1)).toBe(true);
      }
      expect((await stored(d.id)).gps).toBe(gpsRows);
    }), { numRuns: 250 });
  });

  it('answers every truncation of a valid body with 400 and stores nothing', async () => {
    const d = await t.newDevice('home_infra', owner);
    const full = JSON.stringify({ data: { temperature: 21.5, humidity: 40 }, readings: [{ metric_name: 'co2', metric_value: 400, unit: 'ppm' }], gps: { lat: 1, lng: 2 } });
    await fc.assert(fc.asyncProperty(fc.nat(full.length - 1), async (cut) => {
      const r = await send(full.slice(0, cut), `Bearer ${d.token}`, 'application/json');
      expect(r.status).toBe(400);
      expect(r.json.error).toMatch(/^Body is not valid JSON/);
      await expectConsistent(r, d.id);
    }), { numRuns: 60 });
  });

  it('answers bodies that are not UTF-8 with JSON and never a 5xx', async () => {
    const d = await t.newDevice('home_infra', owner);
    const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
    const garbage = await send(bytes([0xff, 0xfe, 0x00, 0x80, 0xc3]), `Bearer ${d.token}`, 'application/json');
    expect(garbage.status).toBe(400);
    await expectConsistent(garbage, d.id);
    const inName = await send(bytes('{"data":{"temp', [0xff, 0xc0], '":1}}'), `Bearer ${d.token}`, 'application/json');
    expect(inName.status).toBe(400);
    await expectConsistent(inName, d.id);
    // A broken unit is decoded with replacement characters, and then it is stored as such or refused: never a 5xx.
    const inUnit = await send(bytes('{"readings":[{"metric_name":"t","metric_value":1,"unit":"', [0xff, 0xfe], '"}]}'), `Bearer ${d.token}`, 'application/json');
    await expectConsistent(inUnit, d.id);
  });

  it('stores nothing of a body cut off by a dropped connection, and keeps serving', async () => {
    const d = await t.newDevice('home_infra', owner);
    const body = '{"data":{"temperature":21.5,"humidity":40}}';
    await new Promise<void>((resolve, reject) => {
      const s = net.connect(Number(new URL(t.baseUrl).port), '127.0.0.1', () => {
        s.write(`POST ${INGEST} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${d.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`);
        setTimeout(() => { s.destroy(); resolve(); }, 50);
      });
      s.on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(await stored(d.id)).toEqual({ telemetry: 0, gps: 0, events: 0 });
    const r = await send(body, `Bearer ${d.token}`, 'application/json');
    expect(r.status).toBe(200);
    await expectConsistent(r, d.id);
  });
});
