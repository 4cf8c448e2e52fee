// Piscina worker entry: one batch -> one transaction on this worker's own connection, in few round trips:
// BEGIN, binary COPY of the readings (and GPS fixes), then one call of ingest_commit_batch (sql/003) that locks
// the devices in id order, re-checks every request's token (revocation is at once), writes module events,
// latest values and device status; then COMMIT. Every worker takes locks in one order, so none deadlocks.
import { workerData } from 'node:worker_threads';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { GPS_STRIDE, keepRequests, type BatchPayload } from '../ingest/batch-format.js';
import type { AlertChange, BatchOutcome } from '../ingest/batcher.js';
import { EVENT_TYPES, MODULES } from '../ingest/modules.js';
import { BinaryCopyWriter } from '../store/copy-binary.js';
import { SqlState, sqlState, STATEMENT_TIMEOUT_MS } from '../store/db.js';
import * as q from '../store/queries.js';
import { mayFire, type WatchedRules } from '../alerts/compare.js';

const { databaseUrl } = workerData as { databaseUrl: string };

let client: pg.Client | null = null;

async function connection(): Promise<pg.Client> {
  if (client) return client;
  const c = new pg.Client({ connectionString: databaseUrl, application_name: 'telemetry-ingest-worker', statement_timeout: STATEMENT_TIMEOUT_MS });
  // A dropped connection is noticed here and replaced at the next batch.
  c.on('error', () => { if (client === c) client = null; });
  c.on('notification', () => { watched.readAtMs = -Infinity; });
  await c.connect();
  await c.query(`LISTEN ${q.RULES_CHANGED_CHANNEL}`);
  // A new connection may have missed changes while there was none.
  watched.readAtMs = -Infinity;
  client = c;
  return c;
}

function copyIn(c: pg.Client, sql: string, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = c.query(copyFrom(sql));
    stream.on('error', reject);
    stream.on('finish', resolve);
    stream.end(data);
  });
}

function encodeTelemetry(p: BatchPayload): Buffer {
  const names = p.names.map((n) => Buffer.from(n));
  const units = p.units.map((u) => Buffer.from(u));
  const w = new BinaryCopyWriter(p.readingCount * 48 + 64);
  for (let i = 0; i < p.readingCount; i++) {
    w.startRow(5).timestamptz(p.rTime[i]).int8(p.rDevice[i]).textBytes(names[p.rName[i]]).float8(p.rValue[i]);
    const u = p.rUnit[i];
    if (u < 0) w.nullValue(); else w.textBytes(units[u]);
  }
  return w.finish();
}

function encodeGps(p: BatchPayload): Buffer {
  const w = new BinaryCopyWriter(p.gpsCount * 96 + 64);
  const g = p.gps;
  for (let i = 0; i < p.gpsCount; i++) {
    const o = i * GPS_STRIDE;
    w.startRow(8).timestamptz(g[o]).int8(g[o + 1]).float8(g[o + 2]).float8(g[o + 3])
      .float8OrNull(g[o + 4]).float8OrNull(g[o + 5]).float8OrNull(g[o + 6]).float8OrNull(g[o + 7]);
  }
  return w.finish();
}

/** Newest reading per (device, metric), sorted by that key: the upsert's lock order and its no-duplicate rule. */
function latestPerKey(p: BatchPayload) {
  const best = new Map<string, number>();
  for (let i = 0; i < p.readingCount; i++) {
    const key = `${p.rDevice[i]}\u0000${p.names[p.rName[i]]}`;
    const prev = best.get(key);
    if (prev === undefined || p.rTime[i] >= p.rTime[prev]) best.set(key, i);
  }
  const idx = [...best.values()].sort((a, b) =>
    p.rDevice[a] - p.rDevice[b] || (p.names[p.rName[a]] < p.names[p.rName[b]] ? -1 : p.names[p.rName[a]] > p.names[p.rName[b]] ? 1 : 0));
  return {
    devices: idx.map((i) => p.rDevice[i]),
    names: idx.map((i) => p.names[p.rName[i]]),
    values: idx.map((i) => p.rValue[i]),
    units: idx.map((i) => (p.rUnit[i] < 0 ? null : p.units[p.rUnit[i]])),
    timesMs: idx.map((i) => p.rTime[i]),
  };
}

/** Last contact per device, sorted by id: the order in which device rows are locked. */
function lastSeenPerDevice(p: BatchPayload) {
  const seen = new Map<number, number>();
  for (let i = 0; i < p.eventCount; i++) {
    const prev = seen.get(p.eDevice[i]);
    if (prev === undefined || p.eTime[i] > prev) seen.set(p.eDevice[i], p.eTime[i]);
  }
  const ids = [...seen.keys()].sort((a, b) => a - b);
  return { ids, seenMs: ids.map((id) => seen.get(id)!) };
}

// The enabled rules' conditions, re-read when a rule change is notified (sql/008) and at most a second apart
// anyway: readings no rule names never reach the alert engine, and those no rule fires on are flagged so the
// engine's fast path (sql/007) skips them unless their device has an alert or a count under way.
const WATCHED_REFRESH_MS = 1000;
let watched: { rules: WatchedRules; readAtMs: number } = { rules: new Map(), readAtMs: -Infinity };

async function watchedRules(c: pg.Client): Promise<WatchedRules> {
  if (Date.now() - watched.readAtMs >= WATCHED_REFRESH_MS) {
    const res = await c.query<{ metric_name: string; operator: string; threshold: number }>(q.watchedRules);
    const rules: WatchedRules = new Map();
    for (const r of res.rows) rules.set(r.metric_name, [...(rules.get(r.metric_name) ?? []), { operator: r.operator, threshold: r.threshold }]);
    watched = { rules, readAtMs: Date.now() };
  }
  return watched.rules;
}

/** The readings some rule watches, in batch order (the engine sorts by device, rule and time), each flagged when a rule may fire on it. */
function alertReadings(p: BatchPayload, rules: WatchedRules) {
  const out = { devices: [] as number[], metrics: [] as string[], values: [] as number[], timesMs: [] as number[], hot: [] as boolean[] };
  if (rules.size === 0) return out;
  const watchedIdx = p.names.map((n) => rules.has(n));
  for (let i = 0; i < p.readingCount; i++) {
    if (!watchedIdx[p.rName[i]]) continue;
    const name = p.names[p.rName[i]];
    out.devices.push(p.rDevice[i]); out.metrics.push(name); out.values.push(p.rValue[i]); out.timesMs.push(p.rTime[i]);
    out.hot.push(mayFire(rules, name, p.rValue[i]));
  }
  return out;
}

interface WriteResult { refused: number[]; alertChanges: AlertChange[] }

/** Commits the batch, or rolls back and returns the events to leave out when a token was revoked. */
async function writeBatch(c: pg.Client, p: BatchPayload): Promise<WriteResult> {
  const alerts = alertReadings(p, await watchedRules(c));
  const telemetry = p.readingCount > 0 ? encodeTelemetry(p) : null;
  const gps = p.gpsCount > 0 ? encodeGps(p) : null;
  const latest = latestPerKey(p);
  const seen = lastSeenPerDevice(p);
  const n = p.eventCount;
  const events = {
    device: Array.from(p.eDevice.subarray(0, n)),
    token: Array.from(p.eToken.subarray(0, n), (t) => p.tokens[t]),
    timeMs: Array.from(p.eTime.subarray(0, n)),
    module: Array.from(p.eModule.subarray(0, n), (m) => MODULES[m]),
    type: Array.from(p.eType.subarray(0, n), (t) => EVENT_TYPES[t]),
    readings: Array.from(p.eReadings.subarray(0, n)),
    skipped: Array.from(p.eSkipped.subarray(0, n)),
  };
  await c.query('BEGIN');
  try {
    if (telemetry) await copyIn(c, q.copyTelemetry, telemetry);
    if (gps) await copyIn(c, q.copyGps, gps);
    const res = await c.query<{ refused: number[]; alert_changes: AlertChange[] }>(q.commitBatch, [
      seen.ids, seen.seenMs,
      events.device, events.token, events.timeMs, events.module, events.type, events.readings, events.skipped,
      latest.devices, latest.names, latest.values, latest.units, latest.timesMs,
      alerts.devices, alerts.metrics, alerts.values, alerts.timesMs, alerts.hot,
    ]);
    const { refused, alert_changes: alertChanges } = res.rows[0];
    await c.query(refused.length > 0 ? 'ROLLBACK' : 'COMMIT');
    return { refused, alertChanges };
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

const RETRYABLE = new Set<string>([SqlState.deadlockDetected, SqlState.serializationFailure]);

/** Returns the indices of the requests left out because their token was revoked before commit, and alert changes. */
export default async function ingestBatch(original: BatchPayload): Promise<BatchOutcome> {
  // Maps each event of the payload being written back to its index in the batch as sent.
  let p = original;
  let toOriginal: number[] | null = null;
  const refused: number[] = [];
  for (let attempt = 1; ; attempt++) {
    const c = await connection();
    try {
      const { refused: revoked, alertChanges } = await writeBatch(c, p);
      if (revoked.length === 0) return { refused, alertChanges };
      const map = toOriginal;
      for (const e of revoked) refused.push(map ? map[e] : e);
      const left = new Set(revoked);
      toOriginal = [];
      for (let e = 0; e < p.eventCount; e++) if (!left.has(e)) toOriginal.push(map ? map[e] : e);
      if (toOriginal.length === 0) return { refused, alertChanges: [] };
      p = keepRequests(p, (e) => !left.has(e));
      attempt = 0; // a revocation is not a failure: the rest of the batch gets its full retries
    } catch (err) {
      if (attempt < 3 && RETRYABLE.has(sqlState(err) ?? '')) continue;
      // Anything else may have left the connection unusable: start the next batch on a fresh one.
      if (!sqlState(err)) { client = null; await c.end().catch(() => {}); }
      throw err;
    }
  }
}
