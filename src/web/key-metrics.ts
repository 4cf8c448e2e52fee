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
