import { describe, expect, it } from 'vitest';
import { MAX_FUTURE_MS, MIN_RECORDED_AT_MS, parseRecordedAt } from './recorded-at.js';

const NOW = Date.UTC(2026, 2, 10, 12, 0, 0);
const parse = (v: unknown, now = NOW) => parseRecordedAt(v, now);
const ms = (v: unknown) => {
  const r = parse(v);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(v)} to parse: ${r.reason}`);
  return r.ms;
};
const reason = (v: unknown, now = NOW) => {
  const r = parse(v, now);
  if (r.ok) throw new Error(`expected ${JSON.stringify(v)} to be refused, got ${new Date(r.ms).toISOString()}`);
  return r.reason;
};

describe('parseRecordedAt: accepted forms', () => {
  it('reads "YYYY-MM-DD HH:MM:SS" as UTC', () => {
    expect(ms('2026-01-15 10:20:30')).toBe(Date.UTC(2026, 0, 15, 10, 20, 30));
  });

  it('reads ISO 8601 with Z, in either case, with and without fractional seconds', () => {
    expect(ms('2026-01-15T10:20:30Z')).toBe(Date.UTC(2026, 0, 15, 10, 20, 30));
    expect(ms('2026-01-15t10:20:30z')).toBe(Date.UTC(2026, 0, 15, 10, 20, 30));
    expect(ms('2026-01-15T10:20:30.5Z')).toBe(Date.UTC(2026, 0, 15, 10, 20, 30, 500));
    expect(ms('2026-01-15T10:20:30.123456789Z')).toBe(Date.UTC(2026, 0, 15, 10, 20, 30, 123));
  });

  it('applies positive and negative offsets, with or without a colon', () => {
    const utc = Date.UTC(2026, 0, 15, 4, 50, 30);
    expect(ms('2026-01-15T10:20:30+05:30')).toBe(utc);
    expect(ms('2026-01-15T10:20:30+0530')).toBe(utc);
    expect(ms('2026-01-14T20:50:30-0800')).toBe(utc);
    expect(ms('2026-01-14T20:50:30-08:00')).toBe(utc);
    expect(ms('2026-01-15T04:50:30+00:00')).toBe(utc);
  });

  it('reads numbers below 1e11 as epoch seconds and from 1e11 as epoch milliseconds', () => {
    expect(ms(1768472430)).toBe(1768472430_000);
    expect(ms(1768472430.25)).toBe(1768472430_250);
    expect(ms(1768472430_000)).toBe(1768472430_000);
    // 1e11 - 1 seconds is the year 5138: too far ahead. 1e11 milliseconds is 1973: too early.
    expect(reason(1e11 - 1)).toMatch(/future/);
    expect(reason(1e11)).toMatch(/before 2000/);
  });
});

describe('parseRecordedAt: refused values', () => {
  it('refuses dates and times that do not exist', () => {
    for (const v of ['2026-02-30 00:00:00', '2026-02-29 00:00:00', '2026-04-31 00:00:00', '2026-13-01 00:00:00',
      '2026-00-10 00:00:00', '2026-01-00 00:00:00', '2026-01-01 24:00:00', '2026-01-01 23:60:00', '2026-01-01 23:59:60',
      '2026-02-30T00:00:00Z']) {
      expect(reason(v), v).toMatch(/not a real date/);
    }
    expect(ms('2024-02-29 12:00:00')).toBe(Date.UTC(2024, 1, 29, 12));
  });

  it('refuses UTC offsets that no place uses', () => {
    for (const v of ['2026-01-15T10:20:30+99:99', '2026-01-15T10:20:30+15:00', '2026-01-15T10:20:30-05:60']) {
      expect(reason(v), v).toMatch(/impossible UTC offset/);
    }
    expect(ms('2026-01-15T10:20:30+14:00')).toBe(Date.UTC(2026, 0, 14, 20, 20, 30));
  });

  it('refuses other string formats', () => {
    for (const v of ['2026-01-15', '2026-01-15T10:20:30', '2026-01-15 10:20', '2026/01/15 10:20:30', '15-01-2026 10:20:30',
      'yesterday', '', ' 2026-01-15 10:20:30', '2026-01-15 10:20:30Z', '1768472430']) {
      expect(reason(v), v).toMatch(/unknown format/);
    }
  });

  it('refuses values that are neither strings nor finite numbers', () => {
    expect(reason(true)).toMatch(/string or a number/);
    expect(reason(null)).toMatch(/string or a number/);
    expect(reason({})).toMatch(/string or a number/);
    expect(reason(Infinity)).toMatch(/finite/);
    expect(reason(NaN)).toMatch(/finite/);
  });
});

describe('parseRecordedAt: bounds', () => {
  it('accepts 2000-01-01T00:00:00Z and later, and refuses one millisecond before', () => {
    expect(MIN_RECORDED_AT_MS).toBe(Date.UTC(2000, 0, 1));
    expect(reason(MIN_RECORDED_AT_MS - 1)).toMatch(/before 2000-01-01/);
    expect(ms(MIN_RECORDED_AT_MS)).toBe(MIN_RECORDED_AT_MS);
    expect(ms(MIN_RECORDED_AT_MS + 1)).toBe(MIN_RECORDED_AT_MS + 1);
    expect(reason('1999-12-31T23:59:59.999Z')).toMatch(/before 2000-01-01/);
    expect(ms('2000-01-01 00:00:00')).toBe(MIN_RECORDED_AT_MS);
    expect(reason('2000-01-01T00:00:00+00:01')).toMatch(/before 2000-01-01/);
  });

  it('accepts up to now + 1 day and refuses one millisecond later', () => {
    const limit = NOW + MAX_FUTURE_MS;
    expect(MAX_FUTURE_MS).toBe(86_400_000);
    expect(ms(limit - 1)).toBe(limit - 1);
    expect(ms(limit)).toBe(limit);
    expect(reason(limit + 1)).toMatch(/future/);
    expect(ms(new Date(limit).toISOString())).toBe(limit);
    expect(reason(new Date(limit + 1).toISOString())).toMatch(/future/);
  });

  it('measures the future bound from the now it is given', () => {
    const later = NOW + 10 * MAX_FUTURE_MS;
    expect(reason(NOW + 2 * MAX_FUTURE_MS)).toMatch(/future/);
    expect(parse(NOW + 2 * MAX_FUTURE_MS, later)).toEqual({ ok: true, ms: NOW + 2 * MAX_FUTURE_MS });
  });
});
