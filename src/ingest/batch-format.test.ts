import { describe, expect, it } from 'vitest';
import { BatchBuilder, GPS_STRIDE, keepRequests } from './batch-format.js';
import type { GpsFix, NormalisedBody } from './normalise.js';

function body(readings: [name: string, value: number, unit: string | null, timeMs: number][], gps: GpsFix | null = null, skipped = 0): NormalisedBody {
  return {
    names: readings.map((r) => r[0]), values: readings.map((r) => r[1]),
    units: readings.map((r) => r[2]), times: readings.map((r) => r[3]), skipped, gps,
  };
}

const T = Date.UTC(2026, 2, 10);

describe('BatchBuilder', () => {
  it('lays readings out in columns with names and units interned across requests', () => {
    const b = new BatchBuilder();
    b.add(7, 2, 0, T + 5, body([['temp', 21.5, 'C', T], ['hum', 40, null, T + 1]], null, 3), 'tok');
    b.add(9, 0, 0, T + 6, body([['temp', 22, 'C', T + 2], ['co2', 400, 'ppm', T + 3]]), 'tok');
    const { payload: p } = b.build();
    expect(p.readingCount).toBe(4);
    expect([...p.rTime.subarray(0, 4)]).toEqual([T, T + 1, T + 2, T + 3]);
    expect([...p.rDevice.subarray(0, 4)]).toEqual([7, 7, 9, 9]);
    expect([...p.rValue.subarray(0, 4)]).toEqual([21.5, 40, 22, 400]);
    expect(p.names).toEqual(['temp', 'hum', 'co2']);
    expect([...p.rName.subarray(0, 4)]).toEqual([0, 1, 0, 2]);
    expect(p.units).toEqual(['C', 'ppm']);
    expect([...p.rUnit.subarray(0, 4)]).toEqual([0, -1, 0, 1]);
  });

  it('records one module event per request, a heartbeat with no readings included', () => {
    const b = new BatchBuilder();
    b.add(7, 2, 0, T + 5, body([['a', 1, null, T], ['b', 2, null, T]], null, 3), 'tok');
    b.add(8, 4, 1, T + 6, null, 'tok');
    const { payload: p } = b.build();
    expect(p.eventCount).toBe(2);
    expect(p.readingCount).toBe(2);
    expect([...p.eDevice.subarray(0, 2)]).toEqual([7, 8]);
    expect([...p.eTime.subarray(0, 2)]).toEqual([T + 5, T + 6]);
    expect([...p.eReadings.subarray(0, 2)]).toEqual([2, 0]);
    expect([...p.eSkipped.subarray(0, 2)]).toEqual([3, 0]);
    expect([...p.eType.subarray(0, 2)]).toEqual([0, 1]);
    expect([...p.eModule.subarray(0, 2)]).toEqual([2, 4]);
  });

  it('stores a GPS fix as eight doubles with NaN for absent optional fields', () => {
    const b = new BatchBuilder();
    const gps = { timeMs: T, lat: 52.5, lng: -4.25, altitudeM: 12, speedKmh: null, headingDeg: 270, accuracyM: null };
    b.add(3, 1, 0, T, body([['speed', 0, null, T]], gps), 'tok');
    b.add(4, 1, 0, T, body([['speed', 1, null, T]]), 'tok');
    const { payload: p } = b.build();
    expect(p.gpsCount).toBe(1);
    expect([...p.gps.subarray(0, GPS_STRIDE)]).toEqual([T, 3, 52.5, -4.25, 12, NaN, 270, NaN]);
  });

  it('grows every column past its initial capacity without losing earlier values', () => {
    const b = new BatchBuilder(4);
    const fix = (i: number) => ({ timeMs: T + i, lat: i, lng: -i, altitudeM: null, speedKmh: null, headingDeg: null, accuracyM: null });
    for (let i = 0; i < 100; i++) {
      b.add(i, i % 6, 0, T + i, body([[`m${i % 3}`, i, null, T + i], [`n${i % 5}`, -i, `u${i % 2}`, T + i]], fix(i)), 'tok');
    }
    expect(b.readingCount).toBe(200);
    expect(b.eventCount).toBe(100);
    const { payload: p } = b.build();
    expect(p.rValue.length).toBeGreaterThanOrEqual(200);
    expect(p.eDevice.length).toBeGreaterThanOrEqual(100);
    for (let i = 0; i < 100; i++) {
      expect(p.rValue[2 * i]).toBe(i);
      expect(p.rValue[2 * i + 1]).toBe(-i);
      expect(p.rDevice[2 * i + 1]).toBe(i);
      expect(p.names[p.rName[2 * i]]).toBe(`m${i % 3}`);
      expect(p.units[p.rUnit[2 * i + 1]]).toBe(`u${i % 2}`);
      expect(p.eDevice[i]).toBe(i);
      expect(p.eModule[i]).toBe(i % 6);
      expect(p.gps[i * GPS_STRIDE + 2]).toBe(i);
    }
    expect(p.gpsCount).toBe(100);
    expect(p.names).toHaveLength(8);
    expect(p.units).toEqual(['u0', 'u1']);
  });

  it('hands over distinct transferable buffers that detach when transferred', () => {
    const b = new BatchBuilder();
    b.add(1, 0, 0, T, body([['a', 1, 'x', T]]), 'tok');
    const { payload, transferList } = b.build();
    expect(transferList).toHaveLength(14);
    expect(new Set(transferList).size).toBe(14);
    for (const buf of transferList) expect(buf).toBeInstanceOf(ArrayBuffer);
    const arrays = [payload.rTime, payload.rDevice, payload.rValue, payload.rName, payload.rUnit, payload.eDevice,
      payload.eTime, payload.eReadings, payload.eSkipped, payload.eType, payload.eModule, payload.eToken, payload.eGps, payload.gps];
    expect(arrays.map((a) => a.buffer)).toEqual(transferList);
    const copy = structuredClone(payload, { transfer: transferList });
    expect(copy.rValue[0]).toBe(1);
    expect(copy.names).toEqual(['a']);
    expect(payload.rValue.byteLength).toBe(0);
  });

  it('starts afresh after build, dictionaries included', () => {
    const b = new BatchBuilder();
    b.add(1, 0, 0, T, body([['a', 1, 'x', T], ['b', 2, 'y', T]]), 'tok');
    const first = b.build().payload;
    expect(b.readingCount).toBe(0);
    expect(b.eventCount).toBe(0);
    b.add(2, 0, 0, T, body([['b', 3, 'y', T]]), 'tok');
    const second = b.build().payload;
    expect(second.names).toEqual(['b']);
    expect(second.units).toEqual(['y']);
    expect(second.rName[0]).toBe(0);
    expect(second.rUnit[0]).toBe(0);
    expect(second.readingCount).toBe(1);
    expect(first.names).toEqual(['a', 'b']);
    expect(first.rValue[0]).toBe(1);
  });

  it('keeps only the chosen requests with their own readings and GPS fixes', () => {
    const b = new BatchBuilder();
    const fix = { timeMs: T, lat: 1, lng: 2, altitudeM: null, speedKmh: 30, headingDeg: null, accuracyM: null };
    b.add(1, 0, 0, T, body([['a', 1, 'x', T], ['b', 2, null, T]], fix), 'tok1');
    b.add(2, 0, 1, T + 1, null, 'tok2');
    b.add(3, 1, 0, T + 2, body([['c', 3, null, T + 2]], { ...fix, lat: 5 }, 4), 'tok3');
    const kept = keepRequests(b.build().payload, (e) => e !== 0);
    expect(kept.eventCount).toBe(2);
    expect([...kept.eDevice.subarray(0, 2)]).toEqual([2, 3]);
    expect(kept.tokens).toEqual(['tok2', 'tok3']);
    expect([...kept.eType.subarray(0, 2)]).toEqual([1, 0]);
    expect([...kept.eSkipped.subarray(0, 2)]).toEqual([0, 4]);
    expect(kept.readingCount).toBe(1);
    expect(kept.names[kept.rName[0]]).toBe('c');
    expect(kept.rDevice[0]).toBe(3);
    expect(kept.gpsCount).toBe(1);
    expect([...kept.gps.subarray(0, GPS_STRIDE)]).toEqual([T, 3, 5, 2, NaN, 30, NaN, NaN]);
  });
});
