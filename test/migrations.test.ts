// Migrations: numbered files of sql/, applied once under an advisory lock and recorded in schema_migrations.
import fs from 'node:fs';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPool } from '../dist/src/store/db.js';
import { migrate, migrationsApplied, readStorageMode } from '../dist/src/store/migrate.js';
import { createTestDatabase } from './support/database.js';

const versions = [...new Set(fs.readdirSync(new URL('../sql/', import.meta.url))
  .map((f) => /^(\d+)_/.exec(f)?.[1]).filter((v): v is string => v !== undefined).map(Number))].sort((a, b) => a - b);

describe('migrate', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const pools: pg.Pool[] = [];
  const newPool = () => { const p = createPool(db.url, 3); pools.push(p); return p; };

  beforeEach(async () => { db = await createTestDatabase(); });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end()));
    await db.drop();
  });

  async function recorded(pool: pg.Pool) {
    return (await pool.query<{ version: number; name: string; variant: string | null; applied_at: Date }>(
      'SELECT version, name, variant, applied_at FROM schema_migrations ORDER BY version')).rows;
  }

  it('applies every numbered file once, records it, and reports the storage mode', async () => {
    const pool = newPool();
    const log: string[] = [];
    expect(await migrate(pool, (m) => log.push(m))).toBe('partitioned');
    const rows = await recorded(pool);
    expect(rows.map((r) => r.version)).toEqual(versions);
    expect(rows.find((r) => r.version === 2)).toMatchObject({ name: 'timeseries', variant: 'partitioned' });
    expect(log).toHaveLength(versions.length);
    expect(log.slice(0, 2)).toEqual(['applied migration 001_core.sql', 'applied migration 002_timeseries.partitioned.sql']);
    expect(await migrationsApplied(pool)).toBe(true);
    expect(await readStorageMode(pool)).toBe('partitioned');
    const tables = await pool.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`);
    expect(tables.rows.map((r) => r.t)).toEqual(expect.arrayContaining(['users', 'devices', 'latest_metrics', 'telemetry', 'gps_points', 'module_events']));
  });

  it('is idempotent: a second run applies nothing and changes no record', async () => {
    const pool = newPool();
    await migrate(pool);
    const first = await recorded(pool);
    const log: string[] = [];
    expect(await migrate(pool, (m) => log.push(m))).toBe('partitioned');
    expect(log).toEqual([]);
    expect(await recorded(pool)).toEqual(first);
  });

  it('applies each file once when two pools migrate at the same time', async () => {
    const a = newPool(), b = newPool();
    const logA: string[] = [], logB: string[] = [];
    const modes = await Promise.all([migrate(a, (m) => logA.push(m)), migrate(b, (m) => logB.push(m))]);
    expect(modes).toEqual(['partitioned', 'partitioned']);
    // One pool did all the work while the other waited on the lock and found nothing left.
    expect([logA.length, logB.length].sort((x, y) => x - y)).toEqual([0, versions.length]);
    expect((await recorded(a)).map((r) => r.version)).toEqual(versions);
    expect(await migrationsApplied(a)).toBe(true);
    expect(await migrationsApplied(b)).toBe(true);
  });

  it('reports migrations as not applied while a file is unrecorded, and re-applies it without error', async () => {
    const pool = newPool();
    await migrate(pool);
    await pool.query('INSERT INTO users (email, password_hash) VALUES ($1, $2)', ['kept@example.com', 'x']);
    await pool.query('DELETE FROM schema_migrations WHERE version = 1');
    expect(await migrationsApplied(pool)).toBe(false);
    expect(await migrate(pool)).toBe('partitioned');
    expect(await migrationsApplied(pool)).toBe(true);
    expect((await pool.query('SELECT email FROM users')).rows).toEqual([{ email: 'kept@example.com' }]);
  });

  it('keeps the storage mode recorded for the database instead of detecting it again', async () => {
    const pool = newPool();
    await migrate(pool);
    await pool.query("UPDATE schema_migrations SET variant = 'timescale' WHERE version = 2");
    const log: string[] = [];
    expect(await migrate(pool, (m) => log.push(m))).toBe('timescale');
    expect(log).toEqual([]);
    expect(await readStorageMode(pool)).toBe('timescale');
  });
});
