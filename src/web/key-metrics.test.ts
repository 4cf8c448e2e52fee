import { describe, expect, it } from 'vitest';
import { MODULES } from '../ingest/modules.js';
import { KEY_METRICS, formatValue, keyMetricsOf, relativeTime, sampleBody, unitOf } from './key-metrics.js';

const at = (name: string, value = 1) => ({ [name]: { value, unit: null, recorded_at: '2026-01-01T00:00:00.000Z' } });

describe('key metrics of the dashboard', () => {
  it("shows a module's key metrics, even those not reported yet, once any of them was reported", () => {
    expect(keyMetricsOf('health', { ...at('heart_rate'), ...at('glucose') })).toEqual(['heart_rate', 'spo2', 'systolic']);
    expect(keyMetricsOf('health', {})).toEqual(['heart_rate', 'spo2', 'systolic']);
  });

  it('falls back to the first three latest metrics by name when none of the key ones was ever reported', () => {
    expect(keyMetricsOf('fleet', { ...at('z'), ...at('b'), ...at('a'), ...at('c') })).toEqual(['a', 'b', 'c']);
  });

  it('has key metrics and a sample body naming a key metric for every module', () => {
    for (const m of MODULES) {
      expect(KEY_METRICS[m].length).toBeGreaterThan(0);
      expect(Object.keys(JSON.parse(sampleBody(m)).data)).toContain(KEY_METRICS[m][0]);
    }
  });

  it('formats values with at most three decimals and the reading unit, else the documented one', () => {
    expect(formatValue(72, 'bpm')).toBe('72 bpm');
    expect(formatValue(0.1 + 0.2, null)).toBe('0.3');
    expect(formatValue(-1.23456, '°C')).toBe('-1.235 °C');
    expect(unitOf('heart_rate', null)).toBe('bpm');
    expect(unitOf('heart_rate', 'beats')).toBe('beats');
    expect(unitOf('steps', null)).toBeNull();
    expect(unitOf('constructor', null)).toBeNull();
  });

  it('gives last seen as seconds, minutes, hours or days ago, at each boundary', () => {
    const now = Date.parse('2026-01-02T00:00:00Z');
    const ago = (s: number) => relativeTime(new Date(now - s * 1000), now);
    expect([ago(0), ago(59), ago(60), ago(3599), ago(3600), ago(86399), ago(86400)])
      .toEqual(['0 s ago', '59 s ago', '1 min ago', '59 min ago', '1 h ago', '23 h ago', '1 d ago']);
    expect(relativeTime(null, now)).toBe('never');
    expect(relativeTime(new Date(now + 5000), now)).toBe('0 s ago');
  });
});
