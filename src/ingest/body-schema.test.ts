import { describe, expect, it } from 'vitest';
import { checkIngestBodyShape } from './body-schema.js';

describe('checkIngestBodyShape', () => {
  it('accepts each of the three forms, their mixture and unknown extra fields', () => {
    for (const body of [
      { data: { a: 1, b: 'x' }, recorded_at: '2026-01-01 00:00:00' },
      { readings: [{ metric_name: 'a', metric_value: 1, unit: 'C', recorded_at: 1767225600 }] },
      { metric_name: 'a', metric_value: 1, unit: 'C' },
      { data: { a: 1 }, readings: [], metric_name: 'b', gps: { lat: 1, lng: 2, altitude_m: 3, speed_kmh: 4, heading_deg: 5, accuracy_m: 6 } },
      { firmware: '1.2.3', anything: [1, 2] },
      {},
    ]) {
      expect(checkIngestBodyShape(body), JSON.stringify(body)).toBeNull();
    }
  });

  it('names the body when it is not an object', () => {
    expect(checkIngestBodyShape([])).toBe('field body must be object');
    expect(checkIngestBodyShape('x')).toBe('field body must be object');
  });

  it('names the field and the problem for a wrong type at the top level', () => {
    expect(checkIngestBodyShape({ data: [1, 2] })).toBe('field data must be object');
    expect(checkIngestBodyShape({ readings: { metric_name: 'a' } })).toBe('field readings must be array');
    expect(checkIngestBodyShape({ metric_name: 7 })).toBe('field metric_name must be string');
    expect(checkIngestBodyShape({ recorded_at: true })).toBe('field recorded_at must be string,number');
    expect(checkIngestBodyShape({ gps: 'here' })).toBe('field gps must be object');
  });

  it('names the path inside readings with dots', () => {
    expect(checkIngestBodyShape({ readings: [{ metric_name: 'a' }, { metric_value: 1 }] }))
      .toBe("field readings.1 must have required property 'metric_name'");
    expect(checkIngestBodyShape({ readings: [{ metric_name: 'a', unit: 5 }] })).toBe('field readings.0.unit must be string');
    expect(checkIngestBodyShape({ readings: [{ metric_name: 'a', recorded_at: null }] })).toBe('field readings.0.recorded_at must be string,number');
    expect(checkIngestBodyShape({ readings: ['a'] })).toBe('field readings.0 must be object');
  });

  it('allows a unit of 32 characters and refuses 33', () => {
    expect(checkIngestBodyShape({ unit: 'u'.repeat(32) })).toBeNull();
    expect(checkIngestBodyShape({ unit: 'u'.repeat(33) })).toBe('field unit must NOT have more than 32 characters');
    expect(checkIngestBodyShape({ readings: [{ metric_name: 'a', unit: 'u'.repeat(33) }] }))
      .toBe('field readings.0.unit must NOT have more than 32 characters');
  });

  it('requires numeric lat and lng in gps and numbers for its optional fields', () => {
    expect(checkIngestBodyShape({ gps: { lat: 1 } })).toBe("field gps must have required property 'lng'");
    expect(checkIngestBodyShape({ gps: { lat: '1', lng: 2 } })).toBe('field gps.lat must be number');
    expect(checkIngestBodyShape({ gps: { lat: 1, lng: 2, speed_kmh: '3' } })).toBe('field gps.speed_kmh must be number');
  });
});
