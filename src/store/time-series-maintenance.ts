import type { Pool } from './db.js';
import { SqlState, sqlState } from './db.js';
import type { StorageMode } from './migrate.js';

export const TIME_SERIES_TABLES = ['telemetry', 'gps_points', 'module_events'] as const;
const DAY_MS = 86_400_000;
// Held by the one instance doing maintenance; others skip the round rather than wait.
const MAINTENANCE_LOCK_KEY = 727_002;

export interface MaintenanceOptions {
  retentionDays: number;       // 0 keeps everything
  compressAfterDays: number;   // TimescaleDB only
  partitionDaysAhead: number;  // native partitions only
}

export interface MaintenanceReport { created: string[]; dropped: string[]; skipped: boolean }

const dayName = (ms: number) => new Date(ms).toISOString().slice(0, 10).replace(/-/g, '');
const dayIso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Keeps the time-series tables ready: daily partitions from yesterday to PARTITION_DAYS_AHEAD ahead and old
 * ones dropped (native), or compression and retention policies (TimescaleDB). `nowMs` is injectable for tests.
 */
export async function maintainTimeSeries(pool: Pool, mode: StorageMode, opts: MaintenanceOptions, nowMs = Date.now()): Promise<MaintenanceReport> {
  const client = await pool.connect();
  const report: MaintenanceReport = { created: [], dropped: [], skipped: false };
  try {
    const lock = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [MAINTENANCE_LOCK_KEY]);
    if (!lock.rows[0].ok) return { ...report, skipped: true };
    try {
      if (mode === 'timescale') await applyTimescalePolicies(client, opts);
      else await maintainPartitions(client, opts, nowMs, report);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]);
    }
    return report;
  } finally {
    client.release();
  }
}

async function maintainPartitions(client: { query: Pool['query'] }, opts: MaintenanceOptions, nowMs: number, report: MaintenanceReport) {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  for (const table of TIME_SERIES_TABLES) {
    for (let d = -1; d <= opts.partitionDaysAhead; d++) {
      const from = today + d * DAY_MS;
      const name = `${table}_p${dayName(from)}`;
      const exists = await client.query('SELECT 1 FROM pg_class WHERE relname = $1', [name]);
      if (exists.rowCount) continue;
      try {
        await client.query(`CREATE TABLE ${name} PARTITION OF ${table} FOR VALUES FROM ('${dayIso(from)} 00:00:00+00') TO ('${dayIso(from + DAY_MS)} 00:00:00+00')`);
        report.created.push(name);
      } catch (err) {
        // Rows for that day already sit in the default partition (backfill after downtime): they stay there.
        if (sqlState(err) !== SqlState.checkViolation) throw err;
      }
    }
    if (opts.retentionDays > 0) {
      const cutoff = today - opts.retentionDays * DAY_MS;
      const parts = await client.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = $1`, [table]);
      for (const { name } of parts.rows) {
        const m = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
        if (!m) continue;
        const dayEnd = Date.UTC(+m[1], +m[2] - 1, +m[3]) + DAY_MS;
        if (dayEnd <= cutoff) {
          await client.query(`DROP TABLE ${name}`);
          report.dropped.push(name);
        }
      }
      await client.query(`DELETE FROM ${table}_default WHERE time < $1`, [new Date(cutoff)]);
    }
  }
}

async function applyTimescalePolicies(client: { query: Pool['query'] }, opts: MaintenanceOptions) {
  for (const table of TIME_SERIES_TABLES) {
    // Remove then add, so a changed COMPRESS_AFTER_DAYS or RETENTION_DAYS takes effect at the next start.
    await client.query('SELECT remove_compression_policy($1, if_exists => TRUE)', [table]);
    await client.query('SELECT add_compression_policy($1, make_interval(days => $2))', [table, opts.compressAfterDays]);
    await client.query('SELECT remove_retention_policy($1, if_exists => TRUE)', [table]);
    if (opts.retentionDays > 0) {
      await client.query('SELECT add_retention_policy($1, make_interval(days => $2))', [table, opts.retentionDays]);
    }
  }
}
