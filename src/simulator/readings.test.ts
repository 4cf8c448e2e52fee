import { describe, expect, it } from 'vitest';
import { MODULES, type Module } from '../ingest/modules.js';
import { CITY_CENTRES, FLAG_HOLD_READINGS, RANGES, clearingSample, createDeviceState, distanceM, nextSample, offset, seededRandom, toBody, type Sample } from './readings.js';

const METRICS: Record<Module, string[]> = {
  health: ['heart_rate', 'spo2', 'systolic', 'diastolic', 'body_temp_c', 'glucose', 'battery_pct'],
  vehicle: ['speed_kmh', 'heading_deg', 'fuel_pct', 'engine_temp_c', 'impact_g_force'],
  fleet: ['speed_kmh', 'heading_deg', 'fuel_pct', 'cargo_temp_c', 'odometer_km'],
  factory: ['gas_ppm', 'smoke_level', 'temperature_c', 'humidity_pct', 'vibration_mm_s'],
  home_infra: ['temperature_c', 'humidity_pct', 'power_w', 'water_flow_lpm'],
  worker: ['heart_rate', 'body_temp_c', 'steps', 'battery_pct'],
};

const valueOf = (s: Sample, name: string) => s.readings.find((r) => r.name === name)?.value;
const within = (v: number | undefined, [lo, hi]: readonly [number, number]) => v !== undefined && v >= lo && v <= hi;

/** The default rules of sql/005_alerts.sql, by metric. */
const DEFAULT_RULES: Record<string, (v: number) => boolean> = {
  ...Object.fromEntries(['fall_detected', 'panic_pressed', 'impact_detected', 'geofence_breach', 'fire_detected', 'water_leak',
    'power_failure', 'high_temperature', 'inactivity'].map((f) => [f, (v: number) => v === 1])),
  spo2: (v) => v < 90, heart_rate: (v) => v > 130 || v < 40, systolic: (v) => v > 180, glucose: (v) => v < 70,
  gas_ppm: (v) => v > 50, smoke_level: (v) => v > 0.1, impact_g_force: (v) => v > 4,
};
/** Metrics of this sample on which a default rule fires. */
const firing = (s: Sample) => s.readings.filter((r) => DEFAULT_RULES[r.name]?.(r.value)).map((r) => r.name);
const firesDefaultRule = (s: Sample) => firing(s).length > 0;

describe('simulated readings', () => {
  it('send exactly the metrics of metrics.md per module, with units, and GPS only for vehicle, fleet and worker', () => {
    for (const [i, module] of MODULES.entries()) {
      const s = nextSample(createDeviceState(module, i, seededRandom(i + 1)), 2000, 0);
      expect(s.readings.map((r) => r.name).sort()).toEqual([...METRICS[module]].sort());
      expect(s.readings.every((r) => r.unit !== null && Number.isFinite(r.value))).toBe(true);
      expect(s.gps !== null).toBe(['vehicle', 'fleet', 'worker'].includes(module));
      expect(s.flag).toBeNull();
    }
  });

  it('stay inside their normal ranges over a long run without flags, so no default rule fires', () => {
    for (const [i, module] of MODULES.entries()) {
      const state = createDeviceState(module, i, seededRandom(100 + i));
      for (let n = 0; n < 5000; n++) {
        const s = nextSample(state, 2000, 0);
        expect(firesDefaultRule(s), `${module} reading ${n}: ${JSON.stringify(s.readings)}`).toBe(false);
        if (module === 'health') {
          expect(within(valueOf(s, 'heart_rate'), RANGES.heart_rate)).toBe(true);
          expect(within(valueOf(s, 'spo2'), RANGES.spo2)).toBe(true);
          expect(valueOf(s, 'diastolic')!).toBeLessThan(valueOf(s, 'systolic')!);
        }
        if (module === 'factory') expect(within(valueOf(s, 'gas_ppm'), RANGES.gas_ppm)).toBe(true);
        if (module === 'vehicle') expect(within(valueOf(s, 'speed_kmh'), RANGES.vehicle_speed_kmh)).toBe(true);
        if (module === 'worker') expect(within(valueOf(s, 'heart_rate'), RANGES.worker_heart_rate)).toBe(true);
        expect(within(valueOf(s, 'battery_pct') ?? 50, RANGES.battery_pct)).toBe(true);
      }
    }
  });

  it('move a vehicle by its speed and heading between readings, and keep it near its city', () => {
    const state = createDeviceState('vehicle', 0, seededRandom(7));
    const centre = CITY_CENTRES[0];
    let prev = nextSample(state, 2000, 0).gps!;
    for (let n = 0; n < 20_000; n++) {
      const next = nextSample(state, 2000, 0).gps!;
      // The step is what the new speed covers in 2 s (rounding of lat/lng to 6 places adds < 0.2 m).
      expect(distanceM(prev.lat, prev.lng, next.lat, next.lng)).toBeCloseTo((next.speed_kmh / 3.6) * 2, -0.3);
      expect(distanceM(next.lat, next.lng, centre.lat, centre.lng)).toBeLessThan(15_000 + 200);
      prev = next;
    }
    expect(distanceM(prev.lat, prev.lng, centre.lat, centre.lng)).toBeGreaterThan(0);
  });

  it('move a worker at walking pace and count its steps up', () => {
    const state = createDeviceState('worker', 1, seededRandom(9));
    const first = nextSample(state, 2000, 0);
    let last = first;
    for (let n = 0; n < 100; n++) {
      last = nextSample(state, 2000, 0);
      expect(within(last.gps!.speed_kmh, RANGES.worker_speed_kmh)).toBe(true);
    }
    expect(valueOf(last, 'steps')!).toBeGreaterThan(valueOf(first, 'steps')!);
    const walked = distanceM(first.gps!.lat, first.gps!.lng, last.gps!.lat, last.gps!.lng);
    expect(walked).toBeLessThan(6 / 3.6 * 2 * 100 + 1);
  });

  it('offset moves north and east by the distance asked', () => {
    const p = offset(52.52, 13.405, 1000, 0);
    expect(p.lng).toBe(13.405);
    expect(distanceM(52.52, 13.405, p.lat, p.lng)).toBeCloseTo(1000, 3);
    const e = offset(52.52, 13.405, 1000, 90);
    expect(e.lat).toBeCloseTo(52.52, 12);
    expect(distanceM(52.52, 13.405, e.lat, e.lng)).toBeCloseTo(1000, 3);
  });

  it('raise a flag that fires a default rule, hold it, then clear every metric that fired a few readings later', () => {
    for (let i = 0; i < 60; i++) {
      const module = MODULES[i % MODULES.length];
      const state = createDeviceState(module, i, seededRandom(40 + i));
      const raised = nextSample(state, 2000, 1);
      expect(raised.flag).toBe('raised');
      expect(firesDefaultRule(raised), `${module}: ${JSON.stringify(raised.readings)}`).toBe(true);
      for (let n = 1; n < FLAG_HOLD_READINGS; n++) {
        const held = nextSample(state, 2000, 1);
        expect(held.flag).toBeNull();
        expect(firesDefaultRule(held)).toBe(true);
      }
      const cleared = nextSample(state, 2000, 1);
      expect(cleared.flag).toBe('cleared');
      expect(firesDefaultRule(cleared), `${module}: ${JSON.stringify(cleared.readings)}`).toBe(false);
      // Every metric that fired is sent again with a normal value, or its alert would never resolve.
      for (const name of firing(raised)) expect(valueOf(cleared, name), `${module} clears ${name}`).toBeDefined();
      expect(nextSample(state, 2000, 1).flag).toBe('raised');
    }
  });

  it('raise flags at about the flag rate', () => {
    const state = createDeviceState('health', 0, seededRandom(3));
    let raised = 0;
    for (let n = 0; n < 40_000; n++) if (nextSample(state, 2000, 0.005).flag === 'raised') raised++;
    // 40,000 readings, about 1 in 200 starting an event (fewer: none starts while one is under way).
    expect(raised).toBeGreaterThan(150);
    expect(raised).toBeLessThan(250);
  });

  it('clear an event at once on stop, and send nothing when none is under way', () => {
    const state = createDeviceState('factory', 0, seededRandom(5));
    expect(clearingSample(state, 2000)).toBeNull();
    nextSample(state, 2000, 1);
    const cleared = clearingSample(state, 2000)!;
    expect(cleared.flag).toBe('cleared');
    expect(firesDefaultRule(cleared)).toBe(false);
    expect(clearingSample(state, 2000)).toBeNull();
  });

  it('build a batch-form body with units, the GPS fix and the recorded time', () => {
    const s = nextSample(createDeviceState('fleet', 2, seededRandom(1)), 2000, 0);
    const body = JSON.parse(toBody(s, 1_700_000_000_000));
    expect(body.recorded_at).toBe(1_700_000_000_000);
    expect(body.readings).toContainEqual({ metric_name: 'cargo_temp_c', metric_value: valueOf(s, 'cargo_temp_c'), unit: '°C' });
    expect(body.gps).toEqual(s.gps);
  });
});
