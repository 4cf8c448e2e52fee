// Native daily partitions on plain PostgreSQL: created ahead, rows routed by day, old ones dropped.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../dist/src/store/db.js';
import { migrate } from '../dist/src/store/migrate.js';
import { maintainTimeSeries, TIME_SERIES_TABLES } from '../dist/src/store/time-series-maintenance.js';
import { createTestDatabase } from './support/database.js';

const DAY = 86_400_000;
// A fixed "now" (midday UTC) keeps partition names stable whatever the wall clock says.
const TODAY = Date.UTC(2026, 2, 10);
const NOW = TODAY + 12 * 3600_000;
const AHEAD = 3;
const MAINTENANCE_LOCK_KEY = 727_002;

const day = (offset: number) => new Date(TODAY + offset * DAY).toISOString().slice(0, 10).replace(/-/g, '');
const partitionsFor = (table: string, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${table}_p${day(from + i)}`);

describe('native time-series partitions', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: pg.Pool;
  const opts = { retentionDays: 0, compressAfterDays: 7, partitionDaysAhead: AHEAD };

  async function partitions(table: string): Promise<string[]> {
    const res = await pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = $1 ORDER BY 1`, [table]);
    return res.rows.map((r) => r.name);
  }
  async function insertTelemetry(time: Date, metric: string): Promise<string> {
    const res = await pool.query<{ part: string }>(
      `INSERT INTO telemetry (time, device_id, metric_name, metric_value) VALUES ($1, 1, $2, 1) RETURNING tableoid::regclass::text AS part`,
      [time, metric]);
    return res.rows[0].part;
  }
  async function telemetryMetrics(): Promise<string[]> {
    return (await pool.query<{ metric_name: string }>('SELECT metric_name FROM telemetry ORDER BY metric_name')).rows.map((r) => r.metric_name);
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url, 6);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('chooses native partitions on PostgreSQL without TimescaleDB', async () => {
    expect(await migrate(pool)).toBe('partitioned');
    for (const table of TIME_SERIES_TABLES) {
      expect(await partitions(table)).toEqual([`${table}_default`]);
    }
  });

  it('creates daily partitions from yesterday to PARTITION_DAYS_AHEAD for every time-series table', async () => {
    const report = await maintainTimeSeries(pool, 'partitioned', opts, NOW);
    expect(report.skipped).toBe(false);
    expect(report.dropped).toEqual([]);
    const expected = TIME_SERIES_TABLES.flatMap((t) => partitionsFor(t, -1, AHEAD));
    expect([...report.created].sort()).toEqual([...expected].sort());
    for (const table of TIME_SERIES_TABLES) {
      expect(await partitions(table)).toEqual([...partitionsFor(table, -1, AHEAD), `${table}_default`].sort());
    }
  });

  it('routes rows for yesterday, today and tomorrow to their own day, with midnight belonging to the new day', async () => {
    expect(await insertTelemetry(new Date(TODAY - DAY + 3600_000), 'yesterday')).toBe(`telemetry_p${day(-1)}`);
    expect(await insertTelemetry(new Date(TODAY - 1), 'yesterday_last_ms')).toBe(`telemetry_p${day(-1)}`);
    expect(await insertTelemetry(new Date(TODAY), 'today_midnight')).toBe(`telemetry_p${day(0)}`);
    expect(await insertTelemetry(new Date(TODAY + DAY + 60_000), 'tomorrow')).toBe(`telemetry_p${day(1)}`);
    const gps = await pool.query(`INSERT INTO gps_points (time, device_id, lat, lng) VALUES ($1, 1, 1, 2) RETURNING tableoid::regclass::text AS part`, [new Date(NOW)]);
    expect(gps.rows[0].part).toBe(`gps_points_p${day(0)}`);
    const ev = await pool.query(`INSERT INTO module_events (time, device_id, module, event_type) VALUES ($1, 1, 'health', 'telemetry') RETURNING tableoid::regclass::text AS part`, [new Date(NOW - DAY)]);
    expect(ev.rows[0].part).toBe(`module_events_p${day(-1)}`);
  });

  it('routes rows older than every partition, or beyond the newest, to the default partition', async () => {
    expect(await insertTelemetry(new Date(TODAY - 7 * DAY), 'week_ago')).toBe('telemetry_default');
    expect(await insertTelemetry(new Date(TODAY - DAY - 1), 'before_yesterday')).toBe('telemetry_default');
    expect(await insertTelemetry(new Date(TODAY + (AHEAD + 1) * DAY + 1000), 'beyond_ahead')).toBe('telemetry_default');
    expect(await insertTelemetry(new Date(TODAY + AHEAD * DAY + 1000), 'last_ahead')).toBe(`telemetry_p${day(AHEAD)}`);
  });

  it('does nothing on a second run for the same day', async () => {
    const before = await partitions('telemetry');
    const report = await maintainTimeSeries(pool, 'partitioned', opts, NOW);
    expect(report).toEqual({ created: [], dropped: [], skipped: false });
    expect(await partitions('telemetry')).toEqual(before);
    expect(await telemetryMetrics()).toHaveLength(8);
  });

  it('skips the round while another instance holds the maintenance lock', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MAINTENANCE_LOCK_KEY]);
      const report = await maintainTimeSeries(pool, 'partitioned', opts, NOW + 20 * DAY);
      expect(report).toEqual({ created: [], dropped: [], skipped: true });
      expect(await partitions('telemetry')).not.toContain(`telemetry_p${day(20)}`);
    } finally {
      await holder.end();
    }
  });

  it('drops partitions past RETENTION_DAYS and old default rows, keeps recent ones, and leaves backfilled days in the default', async () => {
    // Five days later with two days kept: days up to today+2 end by the cutoff (today+3) and go.
    const later = NOW + 5 * DAY;
    const report = await maintainTimeSeries(pool, 'partitioned', { ...opts, retentionDays: 2 }, later);
    expect(report.skipped).toBe(false);
    expect([...report.dropped].sort()).toEqual(TIME_SERIES_TABLES.flatMap((t) => partitionsFor(t, -1, 2)).sort());
    // telemetry's day today+4 already has a row in the default partition: that partition cannot be created.
    expect(report.created).not.toContain(`telemetry_p${day(AHEAD + 1)}`);
    expect(report.created).toContain(`gps_points_p${day(AHEAD + 1)}`);
    expect(await partitions('telemetry')).toEqual([...partitionsFor('telemetry', AHEAD, 5 + AHEAD).filter((p) => p !== `telemetry_p${day(AHEAD + 1)}`), 'telemetry_default'].sort());
    expect(await telemetryMetrics()).toEqual(['beyond_ahead', 'last_ahead']);
    const inDefault = await pool.query(`SELECT metric_name FROM telemetry_default`);
    expect(inDefault.rows).toEqual([{ metric_name: 'beyond_ahead' }]);
    expect((await pool.query('SELECT count(*)::int AS n FROM gps_points')).rows[0].n).toBe(0);
    expect((await pool.query('SELECT count(*)::int AS n FROM module_events')).rows[0].n).toBe(0);
  });

  it('is idempotent with retention too', async () => {
    const later = NOW + 5 * DAY;
    const before = await partitions('telemetry');
    expect(await maintainTimeSeries(pool, 'partitioned', { ...opts, retentionDays: 2 }, later)).toEqual({ created: [], dropped: [], skipped: false });
    expect(await partitions('telemetry')).toEqual(before);
    expect(await telemetryMetrics()).toEqual(['beyond_ahead', 'last_ahead']);
  });

  it('lets two concurrent runs both succeed, with one doing the work or each doing its share once', async () => {
    const later = NOW + 30 * DAY;
    const reports = await Promise.all([
      maintainTimeSeries(pool, 'partitioned', opts, later),
      maintainTimeSeries(pool, 'partitioned', opts, later),
    ]);
    const created = reports.flatMap((r) => r.created).sort();
    expect(created).toEqual(TIME_SERIES_TABLES.flatMap((t) => partitionsFor(t, 29, 30 + AHEAD)).sort());
    expect(reports.some((r) => !r.skipped)).toBe(true);
    for (const table of TIME_SERIES_TABLES) {
      expect(await partitions(table)).toEqual(expect.arrayContaining(partitionsFor(table, 29, 30 + AHEAD)));
    }
  });
});
