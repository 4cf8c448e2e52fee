import { Errors, type ApiError } from '../errors.js';
import { checkIngestBodyShape } from './body-schema.js';
import { parseRecordedAt } from './recorded-at.js';

export const METRIC_NAME = /^[A-Za-z0-9_.:/-]{1,64}$/;
// Units are stored as text: control characters (NUL above all) cannot be, so they are refused up front.
// Counted in characters (code points), as Ajv's maxLength counts them.
const UNIT_OK = /^[^\u0000-\u001f\u007f]{0,32}$/u;

export interface GpsFix {
  timeMs: number;
  lat: number;
  lng: number;
  altitudeM: number | null;
  speedKmh: number | null;
  headingDeg: number | null;
  accuracyM: number | null;
}

/** One request's readings, columnar, ready to append to a batch. */
export interface NormalisedBody {
  times: number[];
  names: string[];
  values: number[];
  units: (string | null)[];
  skipped: number;
  gps: GpsFix | null;
}

export type NormaliseResult = { ok: true; body: NormalisedBody } | { ok: false; error: ApiError };

export interface NormaliseLimits {
  maxReadings: number;
}

const fail = (error: ApiError): NormaliseResult => ({ ok: false, error });
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

function resolveTime(value: unknown, fallbackMs: number, nowMs: number): number | ApiError {
  if (value === undefined) return fallbackMs;
  const t = parseRecordedAt(value, nowMs);
  return t.ok ? t.ms : Errors.badRecordedAt(t.reason);
}

function checkGps(lat: number, lng: number, extras: Record<string, unknown>, timeMs: number): GpsFix | ApiError {
  if (!Number.isFinite(lat) || lat < -90 || lat > 90) return Errors.badGps(`latitude ${lat} is outside -90..90`);
  if (!Number.isFinite(lng) || lng < -180 || lng > 180) return Errors.badGps(`longitude ${lng} is outside -180..180`);
  return {
    timeMs, lat, lng,
    altitudeM: num(extras.altitude_m), speedKmh: num(extras.speed_kmh),
    headingDeg: num(extras.heading_deg), accuracyM: num(extras.accuracy_m),
  };
}

/**
 * Turns a parsed JSON body in any of the three forms into readings. Pure: no I/O, no throwing;
 * `nowMs` is the server time used when recorded_at is absent.
 */
export function normaliseBody(body: unknown, nowMs: number, limits: NormaliseLimits): NormaliseResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail(Errors.notAnObject);
  const shapeProblem = checkIngestBodyShape(body);
  if (shapeProblem) return fail(Errors.badShape(shapeProblem));
  const b = body as Record<string, unknown>;

  const baseTime = resolveTime(b.recorded_at, nowMs, nowMs);
  if (typeof baseTime !== 'number') return fail(baseTime);

  const out: NormalisedBody = { times: [], names: [], values: [], units: [], skipped: 0, gps: null };
  const data = b.data as Record<string, unknown> | undefined;
  const readings = b.readings as Record<string, unknown>[] | undefined;
  const single = typeof b.metric_name === 'string';

  // Bound the work before looking at any entry: every candidate counts, numeric or not.
  const candidates = (data ? Object.keys(data).length : 0) + (readings ? readings.length : 0) + (single ? 1 : 0);
  if (candidates > limits.maxReadings) return fail(Errors.tooManyReadings(limits.maxReadings));

  const add = (name: string, value: unknown, unit: unknown, timeMs: number): ApiError | null => {
    if (typeof value !== 'number') { out.skipped++; return null; }
    if (!METRIC_NAME.test(name)) return Errors.badMetricName(name);
    if (!Number.isFinite(value)) return Errors.badMetricValue(name);
    if (unit !== undefined && unit !== null && (typeof unit !== 'string' || !UNIT_OK.test(unit))) return Errors.badUnit(name);
    out.times.push(timeMs);
    out.names.push(name);
    out.values.push(value);
    out.units.push((unit as string | null | undefined) ?? null);
    return null;
  };

  if (data) {
    for (const key in data) {
      const err = add(key, data[key], undefined, baseTime);
      if (err) return fail(err);
    }
    const lat = num(data.latitude) ?? num(data.lat);
    const lng = num(data.longitude) ?? num(data.lng);
    if (lat !== null || lng !== null) {
      if (lat === null || lng === null) return fail(Errors.badGps('in data needs both latitude and longitude (or lat and lng)'));
      const fix = checkGps(lat, lng, data, baseTime);
      if ('code' in fix) return fail(fix);
      out.gps = fix;
    }
  }
  if (readings) {
    for (const r of readings) {
      const t = resolveTime(r.recorded_at, baseTime, nowMs);
      if (typeof t !== 'number') return fail(t);
      const err = add(r.metric_name as string, r.metric_value, r.unit, t);
      if (err) return fail(err);
    }
  }
  if (single) {
    const err = add(b.metric_name as string, b.metric_value, b.unit, baseTime);
    if (err) return fail(err);
  }
  if (b.gps !== undefined) {
    const g = b.gps as Record<string, number>;
    const fix = checkGps(g.lat, g.lng, g, baseTime);
    if ('code' in fix) return fail(fix);
    out.gps = fix;
  }
  if (out.values.length === 0) return fail(Errors.noNumericMetrics);
  return { ok: true, body: out };
}
