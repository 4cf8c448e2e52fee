import type { Module } from '../ingest/modules.js';

export interface LatestValue { value: number; unit: string | null; recorded_at: string }
export type Latest = Record<string, LatestValue>;

/** The values the dashboard shows per module (docs: /work/briefs/metrics.md, shared with the simulator). */
export const KEY_METRICS: Readonly<Record<Module, readonly string[]>> = {
  health: ['heart_rate', 'spo2', 'systolic'],
  vehicle: ['speed_kmh', 'fuel_pct'],
  fleet: ['speed_kmh', 'cargo_temp_c'],
  factory: ['gas_ppm', 'smoke_level', 'temperature_c'],
  home_infra: ['temperature_c', 'power_w'],
  worker: ['heart_rate', 'steps'],
};

/** Units of the known metrics (metrics.md), shown when a reading came without one (the flat body form has none). */
const DEFAULT_UNITS: Readonly<Record<string, string>> = {
  heart_rate: 'bpm', spo2: '%', systolic: 'mmHg', diastolic: 'mmHg', body_temp_c: '°C', glucose: 'mg/dL', battery_pct: '%',
  speed_kmh: 'km/h', heading_deg: '°', fuel_pct: '%', engine_temp_c: '°C', impact_g_force: 'g', cargo_temp_c: '°C',
  odometer_km: 'km', gas_ppm: 'ppm', temperature_c: '°C', humidity_pct: '%', vibration_mm_s: 'mm/s', power_w: 'W',
  water_flow_lpm: 'l/min',
};

/** The unit to show for a metric: the reading's own, else the documented one, else none. */
export function unitOf(metric: string, unit: string | null | undefined): string | null {
  return unit || (Object.hasOwn(DEFAULT_UNITS, metric) ? DEFAULT_UNITS[metric] : null);
}

/** Modules whose devices report a position: their detail page draws the GPS track. */
export const GPS_MODULES: ReadonlySet<string> = new Set(['vehicle', 'fleet', 'worker']);

/** A plausible reading per module for the curl example shown with a new token. */
const SAMPLE_DATA: Readonly<Record<Module, Record<string, number>>> = {
  health: { heart_rate: 72, spo2: 98 },
  vehicle: { speed_kmh: 54, fuel_pct: 71 },
  fleet: { speed_kmh: 80, cargo_temp_c: 4.5 },
  factory: { gas_ppm: 12, temperature_c: 24 },
  home_infra: { temperature_c: 21.5, power_w: 430 },
  worker: { heart_rate: 88, steps: 1200 },
};

export function sampleBody(module: Module): string {
  return JSON.stringify({ data: SAMPLE_DATA[module] });
}

// When none of a module's key metrics was ever reported, the dashboard shows this many of the others instead.
const FALLBACK_COUNT = 3;

/** The metric names to show for a device: its module's key values, or else a few of its latest metrics. */
export function keyMetricsOf(module: string, latest: Latest): string[] {
  const keys = KEY_METRICS[module as Module] ?? [];
  if (keys.some((k) => k in latest)) return [...keys];
  const others = Object.keys(latest).sort();
  return others.length > 0 ? others.slice(0, FALLBACK_COUNT) : [...keys];
}

/** "72 bpm": up to 3 decimals, no trailing zeros; the unit when there is one. Same rule as the page scripts. */
export function formatValue(value: number, unit: string | null | undefined): string {
  const v = Number.isInteger(value) ? String(value) : String(Number(value.toFixed(3)));
  return unit ? `${v} ${unit}` : v;
}

/** "12 s ago", "3 min ago", "5 h ago", "2 d ago", or "never"; dashboard.js refreshes it with the same rule. */
export function relativeTime(at: Date | string | null, nowMs: number): string {
  if (at === null) return 'never';
  const s = Math.max(0, Math.round((nowMs - new Date(at).getTime()) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export const isoTime = (at: Date | string): string => new Date(at).toISOString();
/** "2026-03-01 08:00:00 UTC": how every page prints a time (format.js's utc is the same for live rows). */
export const utcTime = (at: Date | string): string => isoTime(at).replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
