// The bench's own database: a fresh one on DATABASE_URL's server (dropped afterwards), or an embedded
// PostgreSQL in a temporary DATA_DIR on a free port (stopped and removed afterwards).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { generateToken, hashToken } from '../src/auth/device-tokens.js';
import { createUser } from '../src/auth/users.js';
import { createPool, type Pool } from '../src/store/db.js';
import { openEmbeddedDatabase } from '../src/store/embedded.js';
import * as q from '../src/store/queries.js';
import { freePort } from './processes.js';

export interface BenchDatabase {
  url: string;
  /** "DATABASE_URL" or "embedded" */
  source: string;
  release(): Promise<void>;
}

export async function openBenchDatabase(serverUrl: string | undefined, log: (m: string) => void): Promise<BenchDatabase> {
  if (serverUrl) {
    const name = `telemetry_bench_${Date.now().toString(36)}_${crypto.randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try { await admin.query(`CREATE DATABASE ${name}`); } finally { await admin.end(); }
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    log(`created database ${name} on ${url.host}`);
    return {
      url: url.toString(),
      source: 'DATABASE_URL',
      release: async () => {
        const c = new pg.Client({ connectionString: serverUrl });
        await c.connect();
        try {
          await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
          await c.query(`DROP DATABASE IF EXISTS ${name}`);
        } finally { await c.end(); }
      },
    };
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'telemetry-bench-'));
  const port = await freePort();
  log(`starting embedded PostgreSQL in ${dataDir} on port ${port}`);
  try {
    const db = await openEmbeddedDatabase(dataDir, port, log);
    return {
      url: db.url,
      source: 'embedded',
      release: async () => {
        try { await db.stop(); } finally { fs.rmSync(dataDir, { recursive: true, force: true }); }
      },
    };
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

export interface Fleet { ownerId: number; ownerEmail: string; ownerPassword: string; ids: number[]; tokens: string[] }

const PROVISION_CHUNK = 1000;
export const FLEET_OWNER_EMAIL = 'bench@example.com';

/** One user and `count` devices, inserted like `device:bulk-create` does, keeping the plaintext tokens. */
export async function provisionFleet(pool: Pool, count: number, module: string, ownerEmail = FLEET_OWNER_EMAIL): Promise<Fleet> {
  const ownerPassword = crypto.randomBytes(12).toString('base64url');
  const owner = await createUser(pool, ownerEmail, ownerPassword);
  const fleet: Fleet = { ownerId: owner.id, ownerEmail, ownerPassword, ids: [], tokens: [] };
  const stamp = Date.now().toString(36);
  for (let done = 0; done < count;) {
    const n = Math.min(PROVISION_CHUNK, count - done);
    const names = Array.from({ length: n }, (_, i) => `bench-${stamp}-${done + i + 1}`);
    const tokens = names.map(() => generateToken());
    const res = await pool.query<{ id: number; name: string }>(q.insertDevicesBulk, [owner.id, names, module, tokens.map(hashToken)]);
    const byName = new Map(names.map((name, i) => [name, tokens[i]]));
    for (const r of res.rows) { fleet.ids.push(r.id); fleet.tokens.push(byName.get(r.name)!); }
    done += n;
  }
  return fleet;
}

/** Which rows belong to a workload: a metric-name prefix ("w2."), or the exact names it sends (W1's health metrics). */
export type MetricFilter = string | readonly string[];
const where = (f: MetricFilter) => (typeof f === 'string' ? "metric_name LIKE $1 || '%'" : 'metric_name = ANY($1::text[])');

/** Telemetry rows of one workload (the tables are emptied before each). */
export async function countTelemetry(pool: Pool, filter: MetricFilter): Promise<number> {
  const res = await pool.query<{ n: number }>(`SELECT count(*)::int8 AS n FROM telemetry WHERE ${where(filter)}`, [filter]);
  return res.rows[0].n;
}

/** Fault injection (BENCH_INJECT_LOSS=1): deletes the readings of one stored request, to see the check fail. */
export async function deleteOneRequestRows(pool: Pool, filter: MetricFilter): Promise<number> {
  const res = await pool.query(`
    DELETE FROM telemetry WHERE ${where(filter)} AND (device_id, time) IN (
      SELECT device_id, time FROM telemetry WHERE ${where(filter)} LIMIT 1)`, [filter]);
  return res.rowCount ?? 0;
}

/**
 * Empties the time-series tables and writes dirty pages out, so that each phase starts from the same
 * table size and does not pay for the previous phase's checkpoint.
 */
export async function resetTimeSeries(pool: Pool): Promise<void> {
  await pool.query('TRUNCATE telemetry, module_events, gps_points, latest_metrics');
  await pool.query('CHECKPOINT').catch(() => {});
}

export async function serverVersion(pool: Pool): Promise<string> {
  const res = await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  const ts = await pool.query<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'timescaledb'");
  return ts.rows[0] ? `${res.rows[0].v} + timescaledb ${ts.rows[0].v}` : res.rows[0].v;
}

export { createPool };
