// Request bodies of the workloads, and the row shape shared by W2 and the raw COPY. Each workload's metric
// names start with its own prefix ("w1.", "w2.", ...), so its stored rows can be counted apart.

/** Ten metrics a factory sensor might send, with their units. */
export const METRICS: readonly { name: string; unit: string; base: number; spread: number }[] = [
  { name: 'temperature', unit: 'C', base: 21, spread: 8 },
  { name: 'humidity', unit: '%', base: 45, spread: 20 },
  { name: 'pressure', unit: 'hPa', base: 1013, spread: 15 },
  { name: 'voltage', unit: 'V', base: 230, spread: 6 },
  { name: 'current', unit: 'A', base: 12, spread: 4 },
  { name: 'power', unit: 'kW', base: 2.7, spread: 1 },
  { name: 'rpm', unit: 'rpm', base: 1450, spread: 60 },
  { name: 'vibration', unit: 'mm/s', base: 2.2, spread: 1.5 },
  { name: 'flow', unit: 'l/min', base: 38, spread: 10 },
  { name: 'level', unit: 'cm', base: 120, spread: 40 },
];

// A deterministic pseudo-random source (the simulator's), so that every run sends the same bodies.
export { seededRandom } from '../src/simulator/readings.js';
import { seededRandom } from '../src/simulator/readings.js';

const round2 = (v: number) => Math.round(v * 100) / 100;

export function metricValue(i: number, rnd: () => number): number {
  const m = METRICS[i % METRICS.length];
  return round2(m.base + (rnd() - 0.5) * m.spread);
}

/** The flat form, `{"data": {...10 numbers}}` under `prefix`, stamped with server time (the warm-up's bodies). */
export function flatBodies(prefix: string, count: number, seed = 1): string[] {
  const rnd = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const data: Record<string, number> = {};
    METRICS.forEach((m, i) => { data[prefix + m.name] = metricValue(i, rnd); });
    return JSON.stringify({ data });
  });
}

/**
 * W1's ten health metrics (names of docs metrics.md, no prefix): six of them are watched by the default alert
 * rules (heart_rate > 130 and < 40, spo2 < 90, systolic > 180, glucose < 70, fall_detected and panic_pressed
 * == 1), so with the rules enabled every request goes to the engine. The values stay in normal ranges except
 * for one device in 500, whose heart rate stays at 140: a device in alarm, as a real fleet always has a few. It
 * opens one alert and then keeps that device on the engine's full path (sql/007), and it proves from the
 * database that the rules ran.
 */
export const W1_METRICS: readonly { name: string; base: number; spread: number }[] = [
  { name: 'heart_rate', base: 78, spread: 30 },
  { name: 'spo2', base: 96.5, spread: 4 },
  { name: 'systolic', base: 122, spread: 30 },
  { name: 'diastolic', base: 78, spread: 16 },
  { name: 'glucose', base: 105, spread: 50 },
  { name: 'body_temp_c', base: 36.8, spread: 1 },
  { name: 'battery_pct', base: 60, spread: 70 },
  { name: 'fall_detected', base: 0, spread: 0 },
  { name: 'panic_pressed', base: 0, spread: 0 },
  { name: 'respiration_rate', base: 15, spread: 6 },
];
export const W1_METRIC_NAMES: readonly string[] = W1_METRICS.map((m) => m.name);
/** The W1 metrics some default rule watches (sql/005_alerts.sql). */
export const W1_WATCHED_METRICS: readonly string[] = ['heart_rate', 'spo2', 'systolic', 'glucose', 'fall_detected', 'panic_pressed'];

const IN_ALARM_EVERY = 500;

/** W1: the flat form with the ten health metrics, stamped with server time (no recorded_at). */
export function healthBodies(count: number, seed = 1): string[] {
  const rnd = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const data: Record<string, number> = {};
    for (const m of W1_METRICS) data[m.name] = round2(m.base + (rnd() - 0.5) * m.spread);
    if (i % IN_ALARM_EVERY === IN_ALARM_EVERY - 1) data.heart_rate = 140;
    return JSON.stringify({ data });
  });
}

/**
 * W2: the batch form, as a device uploading buffered readings: the ten metrics at readings/10 instants
 * 250 ms apart, each reading with its unit and an ISO 8601 recorded_at ending shortly before `endMs`.
 */
export function batchBodies(prefix: string, count: number, readingsPerRequest: number, endMs: number, seed = 2): string[] {
  const rnd = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const readings = Array.from({ length: readingsPerRequest }, (_, j) => {
      const m = METRICS[j % METRICS.length];
      const instant = Math.floor(j / METRICS.length);
      const recordedAt = new Date(endMs - (readingsPerRequest / METRICS.length - instant) * 250).toISOString();
      return { metric_name: prefix + m.name, metric_value: metricValue(j, rnd), unit: m.unit, recorded_at: recordedAt };
    });
    return JSON.stringify({ readings });
  });
}

/** Readings in one body of either form (every value is a number, so none is skipped). */
export function readingsIn(body: string): number {
  const parsed = JSON.parse(body) as { data?: Record<string, unknown>; readings?: unknown[] };
  return (parsed.data ? Object.keys(parsed.data).length : 0) + (parsed.readings?.length ?? 0);
}
