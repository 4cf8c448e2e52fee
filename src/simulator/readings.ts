// Pure per-module reading generators for the fleet simulator: plausible values that drift (random walks),
// GPS positions that advance by speed and heading around a city centre, and occasional flag events that
// raise an alert under the default rules and clear a few readings later. No I/O; the random source is injected.
// Metric names and units follow docs metrics.md (shared with the dashboard's key values).
import type { Module } from '../ingest/modules.js';

export interface Reading { name: string; value: number; unit: string | null }
export interface GpsFix { lat: number; lng: number; speed_kmh: number; heading_deg: number }
export interface Sample {
  readings: Reading[];
  gps: GpsFix | null;
  /** 'raised': this reading starts a flag event (alert expected); 'cleared': it ends one (alert resolves). */
  flag: 'raised' | 'cleared' | null;
}

/** Readings a flag event lasts: the flag (or spike) is held this many readings, then the next one clears it. */
export const FLAG_HOLD_READINGS = 3;

const UNITS: Record<string, string> = {
  heart_rate: 'bpm', spo2: '%', systolic: 'mmHg', diastolic: 'mmHg', body_temp_c: '°C', glucose: 'mg/dL', battery_pct: '%',
  speed_kmh: 'km/h', heading_deg: '°', fuel_pct: '%', engine_temp_c: '°C', impact_g_force: 'g', cargo_temp_c: '°C',
  odometer_km: 'km', gas_ppm: 'ppm', smoke_level: 'ratio', temperature_c: '°C', humidity_pct: '%', vibration_mm_s: 'mm/s',
  power_w: 'W', water_flow_lpm: 'l/min', steps: 'count',
};

/** Normal ranges of the drifting values: inside them no default alert rule fires. */
export const RANGES = {
  heart_rate: [55, 110], worker_heart_rate: [65, 120], spo2: [94, 99], systolic: [105, 140], diastolic: [65, 90],
  body_temp_c: [36.1, 37.4], glucose: [75, 140], battery_pct: [5, 100],
  vehicle_speed_kmh: [0, 110], fleet_speed_kmh: [0, 90], worker_speed_kmh: [3, 6], fuel_pct: [5, 100],
  engine_temp_c: [85, 100], impact_g_force: [0, 1.5], cargo_temp_c: [2, 6],
  gas_ppm: [2, 20], smoke_level: [0, 0.05], temperature_c: [20, 35], humidity_pct: [30, 60], vibration_mm_s: [0.5, 4.5],
  home_temperature_c: [18, 24], home_humidity_pct: [35, 55], power_w: [100, 3000],
} as const satisfies Record<string, readonly [number, number]>;

/** City centres the GPS devices drive or walk around (device index picks one). */
export const CITY_CENTRES: readonly { name: string; lat: number; lng: number }[] = [
  { name: 'Berlin', lat: 52.52, lng: 13.405 }, { name: 'Paris', lat: 48.8566, lng: 2.3522 },
  { name: 'Madrid', lat: 40.4168, lng: -3.7038 }, { name: 'London', lat: 51.5074, lng: -0.1278 },
  { name: 'Rome', lat: 41.9028, lng: 12.4964 }, { name: 'Amsterdam', lat: 52.3676, lng: 4.9041 },
];
/** How far from its centre a device roams before it turns back. */
const ROAM_RADIUS_M: Partial<Record<Module, number>> = { vehicle: 15_000, fleet: 25_000, worker: 800 };
const METRES_PER_DEGREE = 111_320;

interface FlagEvent { name: string; remaining: number; hold: Record<string, number> }
interface EventKind { name: string; raise(rnd: () => number): Record<string, number>; clear: Record<string, number> }

/** Per module, the events that raise an alert under the default rules (sql/005_alerts.sql). */
const EVENTS: Record<Module, EventKind[]> = {
  health: [flag('fall_detected'), flag('panic_pressed')],
  vehicle: [flag('impact_detected', (r) => ({ impact_g_force: round(4.5 + r() * 3.5, 2) })), flag('geofence_breach')],
  fleet: [flag('geofence_breach'), flag('impact_detected')], // no impact_g_force: not a fleet metric, so nothing would clear it
  factory: [
    { name: 'gas_ppm', raise: (r) => ({ gas_ppm: round(55 + r() * 95, 1) }), clear: {} },
    flag('fire_detected', (r) => ({ smoke_level: round(0.2 + r() * 0.5, 3) })),
    flag('high_temperature', (r) => ({ temperature_c: round(60 + r() * 20, 1) })),
  ],
  home_infra: [flag('water_leak', (r) => ({ water_flow_lpm: round(15 + r() * 10, 1) })), flag('power_failure', () => ({ power_w: 0 }))],
  worker: [flag('fall_detected'), flag('panic_pressed'), flag('inactivity')],
};

function flag(name: string, extra: (rnd: () => number) => Record<string, number> = () => ({})): EventKind {
  return { name, raise: (rnd) => ({ [name]: 1, ...extra(rnd) }), clear: { [name]: 0 } };
}

export interface DeviceState {
  readonly module: Module;
  readonly rnd: () => number;
  values: Record<string, number>;
  /** GPS devices only. */
  position: { lat: number; lng: number; centreLat: number; centreLng: number; radiusM: number } | null;
  event: FlagEvent | null;
}

/** A deterministic random source (mulberry32), for tests and reproducible runs. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const between = (rnd: () => number, [lo, hi]: readonly [number, number]) => lo + rnd() * (hi - lo);
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
function round(v: number, digits = 0): number { const f = 10 ** digits; return Math.round(v * f) / f; }
/** One step of a random walk of at most ±step, kept inside [lo, hi]. */
const walk = (rnd: () => number, v: number, step: number, [lo, hi]: readonly [number, number]) => clamp(v + (rnd() * 2 - 1) * step, lo, hi);

export function createDeviceState(module: Module, index: number, rnd: () => number = Math.random): DeviceState {
  const R = RANGES;
  const v: Record<string, number> = {};
  switch (module) {
    case 'health':
      Object.assign(v, { heart_rate: between(rnd, [65, 85]), spo2: between(rnd, R.spo2), systolic: between(rnd, [110, 130]),
        diastolic: between(rnd, [70, 82]), body_temp_c: between(rnd, [36.4, 37]), glucose: between(rnd, [85, 120]), battery_pct: between(rnd, [40, 100]) });
      break;
    case 'vehicle':
      Object.assign(v, { speed_kmh: between(rnd, [20, 60]), heading_deg: rnd() * 360, fuel_pct: between(rnd, [30, 100]), engine_temp_c: between(rnd, R.engine_temp_c) });
      break;
    case 'fleet':
      Object.assign(v, { speed_kmh: between(rnd, [20, 60]), heading_deg: rnd() * 360, fuel_pct: between(rnd, [30, 100]),
        cargo_temp_c: between(rnd, R.cargo_temp_c), odometer_km: between(rnd, [5_000, 250_000]) });
      break;
    case 'factory':
      Object.assign(v, { gas_ppm: between(rnd, [4, 12]), smoke_level: between(rnd, [0, 0.02]), temperature_c: between(rnd, [22, 30]),
        humidity_pct: between(rnd, [35, 55]), vibration_mm_s: between(rnd, [1, 3]) });
      break;
    case 'home_infra':
      Object.assign(v, { temperature_c: between(rnd, [19, 23]), humidity_pct: between(rnd, [40, 50]), power_w: between(rnd, [200, 1200]), water_flow_lpm: 0 });
      break;
    case 'worker':
      Object.assign(v, { heart_rate: between(rnd, [70, 95]), body_temp_c: between(rnd, [36.4, 37]), steps: Math.floor(rnd() * 5000),
        battery_pct: between(rnd, [40, 100]), speed_kmh: between(rnd, R.worker_speed_kmh), heading_deg: rnd() * 360 });
      break;
  }
  const radiusM = ROAM_RADIUS_M[module];
  let position: DeviceState['position'] = null;
  if (radiusM !== undefined) {
    const centre = CITY_CENTRES[index % CITY_CENTRES.length];
    // Start somewhere within half the roaming radius of the centre.
    const start = offset(centre.lat, centre.lng, rnd() * radiusM / 2, rnd() * 360);
    position = { ...start, centreLat: centre.lat, centreLng: centre.lng, radiusM };
  }
  return { module, rnd, values: v, position, event: null };
}

/** Moves (lat, lng) by `metres` towards `headingDeg` (0 = north, 90 = east); flat-earth, fine at city scale. */
export function offset(lat: number, lng: number, metres: number, headingDeg: number): { lat: number; lng: number } {
  const h = (headingDeg * Math.PI) / 180;
  const dLat = (metres * Math.cos(h)) / METRES_PER_DEGREE;
  const dLng = (metres * Math.sin(h)) / (METRES_PER_DEGREE * Math.cos((lat * Math.PI) / 180));
  return { lat: lat + dLat, lng: lng + dLng };
}

/** Distance in metres between two nearby points (equirectangular approximation). */
export function distanceM(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const x = (lng2 - lng1) * Math.cos((((lat1 + lat2) / 2) * Math.PI) / 180);
  return Math.hypot(lat2 - lat1, x) * METRES_PER_DEGREE;
}

function bearingDeg(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const x = (lng2 - lng1) * Math.cos((((lat1 + lat2) / 2) * Math.PI) / 180);
  return ((Math.atan2(x, lat2 - lat1) * 180) / Math.PI + 360) % 360;
}

/** Advances speed, heading and position by dtMs: a wobbling heading, a corner now and then, back towards the centre past the radius. */
function move(s: DeviceState, dtMs: number, speedRange: readonly [number, number], speedStep: number): GpsFix {
  const p = s.position!;
  const v = s.values;
  const rnd = s.rnd;
  v.speed_kmh = walk(rnd, v.speed_kmh, speedStep, speedRange);
  let heading = v.heading_deg + (rnd() * 2 - 1) * 8;
  if (rnd() < 0.05) heading += rnd() < 0.5 ? 90 : -90; // a street corner
  if (distanceM(p.lat, p.lng, p.centreLat, p.centreLng) > p.radiusM) {
    heading = bearingDeg(p.lat, p.lng, p.centreLat, p.centreLng) + (rnd() * 2 - 1) * 20;
  }
  v.heading_deg = ((heading % 360) + 360) % 360;
  const metres = (v.speed_kmh / 3.6) * (dtMs / 1000);
  Object.assign(p, offset(p.lat, p.lng, metres, v.heading_deg));
  if (v.odometer_km !== undefined) v.odometer_km += metres / 1000;
  if (v.fuel_pct !== undefined) {
    v.fuel_pct -= metres / 1000 / 6; // about 600 km on a full tank
    if (v.fuel_pct < 5) v.fuel_pct = 100; // refuelled
  }
  return { lat: round(p.lat, 6), lng: round(p.lng, 6), speed_kmh: round(v.speed_kmh, 1), heading_deg: round(v.heading_deg, 1) };
}

/** The device's regular readings after dtMs: every value drifts one step. */
function driftAndRead(s: DeviceState, dtMs: number): { values: Record<string, number>; gps: GpsFix | null } {
  const v = s.values;
  const r = s.rnd;
  const R = RANGES;
  let gps: GpsFix | null = null;
  const drain = (pct: number) => { v.battery_pct -= pct; if (v.battery_pct < R.battery_pct[0]) v.battery_pct = 100; };
  switch (s.module) {
    case 'health':
      v.heart_rate = walk(r, v.heart_rate, 3, R.heart_rate);
      v.spo2 = walk(r, v.spo2, 0.5, R.spo2);
      v.systolic = walk(r, v.systolic, 2, R.systolic);
      v.diastolic = Math.min(walk(r, v.diastolic, 1.5, R.diastolic), v.systolic - 25);
      v.body_temp_c = walk(r, v.body_temp_c, 0.05, R.body_temp_c);
      v.glucose = walk(r, v.glucose, 3, R.glucose);
      drain(0.01);
      return { values: { heart_rate: round(v.heart_rate), spo2: round(v.spo2, 1), systolic: round(v.systolic), diastolic: round(v.diastolic),
        body_temp_c: round(v.body_temp_c, 2), glucose: round(v.glucose), battery_pct: round(v.battery_pct, 1) }, gps };
    case 'vehicle':
      gps = move(s, dtMs, R.vehicle_speed_kmh, 6);
      v.engine_temp_c = walk(r, v.engine_temp_c, 0.5, R.engine_temp_c);
      return { values: { speed_kmh: gps.speed_kmh, heading_deg: gps.heading_deg, fuel_pct: round(v.fuel_pct, 1),
        engine_temp_c: round(v.engine_temp_c, 1), impact_g_force: round(between(r, [0.05, 1.2]), 2) }, gps };
    case 'fleet':
      gps = move(s, dtMs, R.fleet_speed_kmh, 5);
      v.cargo_temp_c = walk(r, v.cargo_temp_c, 0.1, R.cargo_temp_c);
      return { values: { speed_kmh: gps.speed_kmh, heading_deg: gps.heading_deg, fuel_pct: round(v.fuel_pct, 1),
        cargo_temp_c: round(v.cargo_temp_c, 2), odometer_km: round(v.odometer_km, 3) }, gps };
    case 'factory':
      v.gas_ppm = walk(r, v.gas_ppm, 1, R.gas_ppm);
      v.smoke_level = walk(r, v.smoke_level, 0.003, R.smoke_level);
      v.temperature_c = walk(r, v.temperature_c, 0.3, R.temperature_c);
      v.humidity_pct = walk(r, v.humidity_pct, 0.5, R.humidity_pct);
      v.vibration_mm_s = walk(r, v.vibration_mm_s, 0.2, R.vibration_mm_s);
      return { values: { gas_ppm: round(v.gas_ppm, 1), smoke_level: round(v.smoke_level, 3), temperature_c: round(v.temperature_c, 1),
        humidity_pct: round(v.humidity_pct, 1), vibration_mm_s: round(v.vibration_mm_s, 2) }, gps };
    case 'home_infra':
      v.temperature_c = walk(r, v.temperature_c, 0.1, R.home_temperature_c);
      v.humidity_pct = walk(r, v.humidity_pct, 0.3, R.home_humidity_pct);
      v.power_w = walk(r, v.power_w, 150, R.power_w);
      // Taps run now and then: water flows for a while, then stops.
      v.water_flow_lpm = v.water_flow_lpm > 0 ? (r() < 0.3 ? 0 : walk(r, v.water_flow_lpm, 1, [2, 12])) : (r() < 0.05 ? between(r, [2, 12]) : 0);
      return { values: { temperature_c: round(v.temperature_c, 1), humidity_pct: round(v.humidity_pct, 1), power_w: round(v.power_w),
        water_flow_lpm: round(v.water_flow_lpm, 1) }, gps };
    case 'worker':
      gps = move(s, dtMs, R.worker_speed_kmh, 0.5);
      v.heart_rate = walk(r, v.heart_rate, 3, R.worker_heart_rate);
      v.body_temp_c = walk(r, v.body_temp_c, 0.05, R.body_temp_c);
      v.steps += Math.round((gps.speed_kmh / 3.6 / 0.75) * (dtMs / 1000)); // 0.75 m per step
      drain(0.01);
      return { values: { heart_rate: round(v.heart_rate), body_temp_c: round(v.body_temp_c, 2), steps: v.steps, battery_pct: round(v.battery_pct, 1) }, gps };
  }
}

/**
 * The device's next reading, dtMs after the previous one. With probability flagRate (when no event is under
 * way) it starts a flag event: the flag or spike is sent for FLAG_HOLD_READINGS readings, then cleared.
 */
export function nextSample(s: DeviceState, dtMs: number, flagRate: number): Sample {
  const { values, gps } = driftAndRead(s, dtMs);
  let flagState: Sample['flag'] = null;
  if (s.event) {
    s.event.remaining--;
    if (s.event.remaining === 0) {
      const kind = EVENTS[s.module].find((k) => k.name === s.event!.name)!;
      Object.assign(values, kind.clear);
      s.event = null;
      flagState = 'cleared';
    } else {
      Object.assign(values, s.event.hold);
    }
  } else if (flagRate > 0 && s.rnd() < flagRate) {
    const kinds = EVENTS[s.module];
    const kind = kinds[Math.floor(s.rnd() * kinds.length)];
    const hold = kind.raise(s.rnd);
    Object.assign(values, hold);
    s.event = { name: kind.name, remaining: FLAG_HOLD_READINGS, hold };
    flagState = 'raised';
  }
  return { readings: toReadings(values), gps, flag: flagState };
}

/** A reading that ends the event under way at once (used when the simulator stops), or null when none is. */
export function clearingSample(s: DeviceState, dtMs: number): Sample | null {
  if (!s.event) return null;
  s.event.remaining = 1;
  return nextSample(s, dtMs, 0);
}

function toReadings(values: Record<string, number>): Reading[] {
  return Object.entries(values).map(([name, value]) => ({ name, value, unit: UNITS[name] ?? null }));
}

/** The ingest body: the batch form (it carries units) with a top-level GPS fix and the device's own time. */
export function toBody(sample: Sample, recordedAtMs: number): string {
  return JSON.stringify({
    recorded_at: recordedAtMs,
    readings: sample.readings.map((r) => (r.unit === null
      ? { metric_name: r.name, metric_value: r.value }
      : { metric_name: r.name, metric_value: r.value, unit: r.unit })),
    ...(sample.gps ? { gps: sample.gps } : {}),
  });
}
