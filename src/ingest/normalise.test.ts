import { describe, expect, it } from 'vitest';
import { normaliseBody, type NormaliseResult } from './normalise.js';

const NOW = Date.UTC(2026, 2, 10, 12, 0, 0);
const LIMITS = { maxReadings: 5000 };

const run = (body: unknown, limits = LIMITS) => normaliseBody(body, NOW, limits);
const ok = (r: NormaliseResult) => {
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.body;
};
const err = (r: NormaliseResult) => {
  if (r.ok) throw new Error('expected an error');
  return r.error;
};

describe('normaliseBody: the three forms', () => {
  it('reads the flat form, applying its recorded_at to every reading and no unit', () => {
    const b = ok(run({ data: { temperature: 21.5, humidity: 40 }, recorded_at: '2026-03-09 08:00:00' }));
    const t = Date.UTC(2026, 2, 9, 8);
    expect(b).toEqual({ times: [t, t], names: ['temperature', 'humidity'], values: [21.5, 40], units: [null, null], skipped: 0, gps: null });
  });

  it('uses server time when the flat form has no recorded_at', () => {
    expect(ok(run({ data: { x: 1 } })).times).toEqual([NOW]);
  });

  it('reads the batch form with units and per-reading recorded_at falling back to the top-level one', () => {
    const b = ok(run({
      recorded_at: '2026-03-09T00:00:00Z',
      readings: [
        { metric_name: 'spo2', metric_value: 97, unit: '%' },
        { metric_name: 'heart_rate', metric_value: 72, recorded_at: 1773100000 },
      ],
    }));
    expect(b.names).toEqual(['spo2', 'heart_rate']);
    expect(b.values).toEqual([97, 72]);
    expect(b.units).toEqual(['%', null]);
    expect(b.times).toEqual([Date.UTC(2026, 2, 9), 1773100000_000]);
  });

  it('reads the single form with and without a unit', () => {
    expect(ok(run({ metric_name: 'gas_ppm', metric_value: 3.25, unit: 'ppm' }))).toMatchObject({ names: ['gas_ppm'], values: [3.25], units: ['ppm'], times: [NOW] });
    expect(ok(run({ metric_name: 'gas_ppm', metric_value: -0 })).units).toEqual([null]);
  });

  it('takes the readings of every form present in one body, in the order flat, batch, single', () => {
    const b = ok(run({
      data: { a: 1 },
      readings: [{ metric_name: 'b', metric_value: 2 }],
      metric_name: 'c', metric_value: 3,
    }));
    expect(b.names).toEqual(['a', 'b', 'c']);
    expect(b.values).toEqual([1, 2, 3]);
  });

  it('skips and counts strings, booleans, null and missing values across all forms', () => {
    const b = ok(run({
      data: { a: 1, s: '2', t: true, n: null, o: { v: 1 } },
      readings: [{ metric_name: 'r1', metric_value: '5' }, { metric_name: 'r2' }, { metric_name: 'r3', metric_value: 5 }],
      metric_name: 'single', metric_value: false,
    }));
    expect(b.names).toEqual(['a', 'r3']);
    expect(b.skipped).toBe(7);
  });

  it('refuses a body that is not an object', () => {
    for (const body of [null, [], 'text', 42]) expect(err(run(body)).code).toBe('BODY_NOT_OBJECT');
  });

  it('refuses a body without any numeric metric with a message naming all three forms', () => {
    for (const body of [{}, { data: { a: 'x' } }, { readings: [] }, { metric_name: 'm', metric_value: null }]) {
      const e = err(run(body));
      expect(e.code).toBe('NO_NUMERIC_METRICS');
      expect(e.status).toBe(400);
      expect(e.message).toMatch(/flat \{"data":\{/);
      expect(e.message).toMatch(/batch \{"readings":\[\{"metric_name"/);
      expect(e.message).toMatch(/single \{"metric_name":/);
    }
  });
});

describe('normaliseBody: metric names, units and values', () => {
  it('accepts a 64-character name and refuses a 65-character one', () => {
    const n63 = 'a'.repeat(63), n64 = 'b'.repeat(64), n65 = 'c'.repeat(65);
    expect(ok(run({ data: { [n63]: 1, [n64]: 2 } })).names).toEqual([n63, n64]);
    expect(err(run({ data: { [n65]: 1 } })).code).toBe('BAD_METRIC_NAME');
    expect(err(run({ metric_name: n65, metric_value: 1 })).code).toBe('BAD_METRIC_NAME');
  });

  it('accepts every allowed character and refuses others and the empty name', () => {
    expect(ok(run({ metric_name: 'Az09_.:/-', metric_value: 1 })).names).toEqual(['Az09_.:/-']);
    for (const name of ['', 'with space', 'température', 'a;b', 'a\nb', "o'neil"]) {
      const e = err(run({ readings: [{ metric_name: name, metric_value: 1 }] }));
      expect(e.code, name).toBe('BAD_METRIC_NAME');
    }
  });

  it('accepts a 32-character unit and refuses a 33-character one', () => {
    expect(ok(run({ metric_name: 'm', metric_value: 1, unit: 'u'.repeat(31) })).units).toEqual(['u'.repeat(31)]);
    expect(ok(run({ readings: [{ metric_name: 'm', metric_value: 1, unit: 'u'.repeat(32) }] })).units).toEqual(['u'.repeat(32)]);
    for (const body of [{ metric_name: 'm', metric_value: 1, unit: 'u'.repeat(33) }, { readings: [{ metric_name: 'm', metric_value: 1, unit: 'u'.repeat(33) }] }]) {
      const e = err(run(body));
      expect(e.status).toBe(400);
      expect(e.message).toMatch(/unit/i);
      expect(e.message).toMatch(/32/);
    }
  });

  it('refuses units holding control characters, NUL included', () => {
    for (const unit of ['C\u0000', '\u001f', 'a\tb', 'x\u007f', 'line\n']) {
      expect(err(run({ metric_name: 'm', metric_value: 1, unit })).code, JSON.stringify(unit)).toBe('BAD_UNIT');
    }
    expect(ok(run({ metric_name: 'm', metric_value: 1, unit: '°C µg/m³' })).units).toEqual(['°C µg/m³']);
  });

  it('refuses numbers JSON.parse turns into infinities', () => {
    const body = JSON.parse('{"data":{"big":1e400}}');
    expect(body.data.big).toBe(Infinity);
    expect(err(run(body)).code).toBe('BAD_METRIC_VALUE');
    expect(err(run(JSON.parse('{"metric_name":"m","metric_value":-1e400}'))).code).toBe('BAD_METRIC_VALUE');
    expect(ok(run(JSON.parse('{"metric_name":"m","metric_value":1.7976931348623157e308}'))).values).toEqual([Number.MAX_VALUE]);
  });

  it('refuses a bad recorded_at at the top level or in one reading', () => {
    expect(err(run({ data: { a: 1 }, recorded_at: '2026-02-30 00:00:00' })).code).toBe('BAD_RECORDED_AT');
    expect(err(run({ readings: [{ metric_name: 'a', metric_value: 1 }, { metric_name: 'b', metric_value: 1, recorded_at: 'yesterday' }] })).code).toBe('BAD_RECORDED_AT');
  });
});

describe('normaliseBody: GPS', () => {
  it('takes a top-level gps object with its optional fields', () => {
    const b = ok(run({ data: { speed: 3 }, gps: { lat: 52.1, lng: 4.3, altitude_m: 10, heading_deg: 90 } }));
    expect(b.gps).toEqual({ timeMs: NOW, lat: 52.1, lng: 4.3, altitudeM: 10, speedKmh: null, headingDeg: 90, accuracyM: null });
  });

  it('takes latitude/longitude or lat/lng from data, which are readings as well', () => {
    const a = ok(run({ data: { latitude: -33.9, longitude: 151.2, accuracy_m: 5 }, recorded_at: '2026-03-09 00:00:00' }));
    expect(a.gps).toEqual({ timeMs: Date.UTC(2026, 2, 9), lat: -33.9, lng: 151.2, altitudeM: null, speedKmh: null, headingDeg: null, accuracyM: 5 });
    expect(a.names).toEqual(['latitude', 'longitude', 'accuracy_m']);
    expect(ok(run({ data: { lat: 1, lng: 2 } })).gps).toMatchObject({ lat: 1, lng: 2 });
  });

  it('accepts latitudes and longitudes on the edges of their ranges and refuses just past them', () => {
    for (const [lat, lng] of [[90, 180], [-90, -180], [0, 0]]) {
      expect(ok(run({ data: { x: 1 }, gps: { lat, lng } })).gps).toMatchObject({ lat, lng });
    }
    for (const [lat, lng] of [[90.000001, 0], [-90.000001, 0], [0, 180.000001], [0, -180.000001]]) {
      const e = err(run({ data: { x: 1 }, gps: { lat, lng } }));
      expect(e.code, `${lat},${lng}`).toBe('BAD_GPS');
    }
    expect(err(run({ data: { latitude: 91, longitude: 0 } })).code).toBe('BAD_GPS');
    expect(err(run({ data: { lat: 0, lng: -181 } })).code).toBe('BAD_GPS');
  });

  it('refuses partial GPS in data and a gps object missing a coordinate', () => {
    expect(err(run({ data: { latitude: 10 } })).code).toBe('BAD_GPS');
    expect(err(run({ data: { x: 1, lng: 10 } })).code).toBe('BAD_GPS');
    expect(err(run({ data: { x: 1 }, gps: { lat: 1 } })).code).toBe('BAD_PAYLOAD');
  });

  it('ignores non-numeric coordinates in data, counting them as skipped', () => {
    const b = ok(run({ data: { x: 1, latitude: '10', longitude: '20' } }));
    expect(b.gps).toBeNull();
    expect(b.skipped).toBe(2);
  });
});

describe('normaliseBody: maxReadings', () => {
  const limits = { maxReadings: 5 };
  const body = (numeric: number, nonNumeric: number) => ({
    data: Object.fromEntries(Array.from({ length: nonNumeric }, (_, i) => [`s${i}`, 'x'])),
    readings: Array.from({ length: Math.max(0, numeric - 1) }, (_, i) => ({ metric_name: `r${i}`, metric_value: i })),
    metric_name: 'single', metric_value: 1,
  });

  it('accepts limit - 1 and limit candidates, counting non-numeric entries', () => {
    expect(ok(run(body(2, 2), limits))).toMatchObject({ skipped: 2 });
    expect(ok(run(body(3, 2), limits)).values).toHaveLength(3);
  });

  it('refuses limit + 1 candidates with 413 even when some are not numeric', () => {
    const e = err(run(body(2, 4), limits));
    expect(e.code).toBe('TOO_MANY_READINGS');
    expect(e.status).toBe(413);
    expect(e.message).toContain('5');
    expect(err(run({ readings: Array.from({ length: 6 }, () => ({ metric_name: 'm', metric_value: 1 })) }, limits)).status).toBe(413);
  });
});
