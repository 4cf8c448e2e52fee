// Diagnostic (`node dist/bench/batch-steps.js`, after `npm run build`): where one ingest transaction's time
// goes in the database. Replays the statements of src/workers/ingest-worker.ts (same SQL from queries.ts,
// same order) for W1-shaped batches of BENCH_STEP_REQUESTS requests x 10 readings, and prints the mean
// time of each step. Keep in step with writeBatch() there if its statements change.
// BENCH_STEP_RULES=1 sends W1's health metrics instead, and their watched readings to the alert engine (seven
// default rules per request, as the bench's rules-on W1), to see what the evaluation adds to commitBatch.
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { hashToken } from '../src/auth/device-tokens.js';
import { BinaryCopyWriter } from '../src/store/copy-binary.js';
import { migrate } from '../src/store/migrate.js';
import * as q from '../src/store/queries.js';
import { createPool, openBenchDatabase, provisionFleet } from './database.js';
import { METRICS, W1_METRICS, W1_WATCHED_METRICS } from './workloads.js';

const requestsPerBatch = Number(process.env.BENCH_STEP_REQUESTS ?? 40);
const batches = Number(process.env.BENCH_STEP_BATCHES ?? 200);
const withRules = process.env.BENCH_STEP_RULES === '1';
const log = (m: string) => process.stderr.write(`[batch-steps] ${m}\n`);

async function main(): Promise<void> {
  const db = await openBenchDatabase(process.env.DATABASE_URL, log);
  try {
    const pool = createPool(db.url, 2);
    await migrate(pool);
    const fleet = await provisionFleet(pool, 1000, 'factory');
    await pool.end();
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const copy = (sql: string, data: Buffer) => new Promise<void>((resolve, reject) => {
      const s = c.query(copyFrom(sql));
      s.on('error', reject);
      s.on('finish', resolve);
      s.end(data);
    });
    const names = withRules ? W1_METRICS.map((m) => m.name) : METRICS.map((m) => `w1.${m.name}`);
    // Normal values (no rule fires), as W1 sends.
    const normal = new Map(W1_METRICS.map((m) => [m.name, m.base]));
    const sortedNames = [...names].sort();
    const steps = { begin: 0, copyTelemetry: 0, commitBatch: 0, commit: 0 };
    const hashById = new Map(fleet.ids.map((id, i) => [id, hashToken(fleet.tokens[i])]));
    for (let b = 0; b < batches; b++) {
      const devices = Array.from({ length: requestsPerBatch }, (_, i) => fleet.ids[(b * requestsPerBatch + i) % fleet.ids.length]).sort((x, y) => x - y);
      const now = Date.now();
      const telemetry = new BinaryCopyWriter();
      for (const d of devices) {
        for (const n of names) telemetry.startRow(5).timestamptz(now).int8(d).text(n).float8(Math.random()).nullValue();
      }
      const latest = { d: [] as number[], n: [] as string[], v: [] as number[], u: [] as (string | null)[], t: [] as number[] };
      for (const d of devices) for (const n of sortedNames) { latest.d.push(d); latest.n.push(n); latest.v.push(Math.random()); latest.u.push(null); latest.t.push(now); }
      const alerts = { d: [] as number[], n: [] as string[], v: [] as number[], t: [] as number[] };
      if (withRules) for (const d of devices) for (const n of W1_WATCHED_METRICS) { alerts.d.push(d); alerts.n.push(n); alerts.v.push(normal.get(n)!); alerts.t.push(now); }
      let t = performance.now();
      const lap = (k: keyof typeof steps) => { const x = performance.now(); steps[k] += x - t; t = x; };
      await c.query('BEGIN'); lap('begin');
      await copy(q.copyTelemetry, telemetry.finish()); lap('copyTelemetry');
      await c.query(q.commitBatch, [devices, devices.map(() => now), devices, devices.map((d) => hashById.get(d)), devices.map(() => now),
        devices.map(() => 'factory'), devices.map(() => 'telemetry'), devices.map(() => names.length), devices.map(() => 0),
        latest.d, latest.n, latest.v, latest.u, latest.t, alerts.d, alerts.n, alerts.v, alerts.t, alerts.d.map(() => false)]); lap('commitBatch');
      await c.query('COMMIT'); lap('commit');
    }
    await c.end();
    const total = Object.values(steps).reduce((a, b) => a + b, 0);
    console.log(`${batches} batches of ${requestsPerBatch} requests (${requestsPerBatch * names.length} readings${withRules ? `, ${requestsPerBatch * W1_WATCHED_METRICS.length} watched by the default rules` : ''}), one connection, mean per batch:`);
    for (const [k, v] of Object.entries(steps)) console.log(`  ${k.padEnd(20)} ${(v / batches).toFixed(2).padStart(7)} ms  ${((v / total) * 100).toFixed(0).padStart(3)}%`);
    console.log(`  ${'total'.padEnd(20)} ${(total / batches).toFixed(2).padStart(7)} ms`);
  } finally {
    await db.release();
  }
}

main().catch((err: unknown) => { log(String(err instanceof Error ? err.stack : err)); process.exitCode = 1; });
