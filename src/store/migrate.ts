import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from './db.js';

export type StorageMode = 'timescale' | 'partitioned';

// sql/ sits at the project root, above src/store (tests) or dist/src/store (built code).
function findSqlDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'sql');
    if (fs.existsSync(path.join(candidate, '001_core.sql'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('sql/ migrations folder not found');
}

interface MigrationFile { version: number; name: string; variant: StorageMode | null; file: string }

function listMigrations(sqlDir: string): MigrationFile[] {
  return fs.readdirSync(sqlDir)
    .map((f) => /^(\d+)_([a-z0-9_]+)(?:\.(timescale|partitioned))?\.sql$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ version: Number(m[1]), name: m[2], variant: (m[3] as StorageMode | undefined) ?? null, file: path.join(sqlDir, m[0]) }))
    .sort((a, b) => a.version - b.version);
}

// One key for every instance and the CLI: migrations never run twice at once.
const MIGRATION_LOCK_KEY = 727_001;

/**
 * Applies the numbered files of sql/ in order, each in its own transaction, under an advisory lock,
 * recording each in schema_migrations. A file with a .timescale/.partitioned variant is chosen by whether
 * CREATE EXTENSION timescaledb succeeds; the choice is recorded and kept for the database's life.
 */
export async function migrate(pool: Pool, log: (msg: string) => void = () => {}): Promise<StorageMode> {
  const client = await pool.connect();
  try {
    // Migrations may legitimately run long (or wait for another instance's): no statement timeout here.
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, variant text, applied_at timestamptz NOT NULL DEFAULT now())`);
    const applied = await client.query<{ version: number; variant: string | null }>('SELECT version, variant FROM schema_migrations');
    const done = new Map(applied.rows.map((r) => [r.version, r.variant]));
    let mode = [...done.values()].find((v): v is StorageMode => v === 'timescale' || v === 'partitioned') ?? null;
    if (mode === null) mode = await detectStorageMode(client);

    const files = listMigrations(findSqlDir());
    const versions = [...new Set(files.map((f) => f.version))];
    for (const version of versions) {
      if (done.has(version)) continue;
      const candidates = files.filter((f) => f.version === version);
      const chosen = candidates.find((f) => f.variant === mode) ?? candidates.find((f) => f.variant === null);
      if (!chosen) throw new Error(`migration ${version} has no file for storage mode ${mode}`);
      await client.query('BEGIN');
      try {
        await client.query(fs.readFileSync(chosen.file, 'utf8'));
        await client.query('INSERT INTO schema_migrations (version, name, variant) VALUES ($1, $2, $3)', [version, chosen.name, chosen.variant]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`migration ${path.basename(chosen.file)} failed: ${(err as Error).message}`);
      }
      log(`applied migration ${path.basename(chosen.file)}`);
    }
    return mode;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    await client.query('RESET statement_timeout').catch(() => {});
    client.release();
  }
}

async function detectStorageMode(client: { query: Pool['query'] }): Promise<StorageMode> {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS timescaledb');
    return 'timescale';
  } catch {
    return 'partitioned';
  }
}

/** True when every migration file's version is recorded; /readyz uses it. */
export async function migrationsApplied(pool: Pool): Promise<boolean> {
  const wanted = new Set(listMigrations(findSqlDir()).map((f) => f.version));
  const table = await pool.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  if (!table.rows[0].present) return false;
  const res = await pool.query<{ version: number }>('SELECT version FROM schema_migrations');
  for (const r of res.rows) wanted.delete(r.version);
  return wanted.size === 0;
}

export async function readStorageMode(pool: Pool): Promise<StorageMode> {
  const res = await pool.query<{ variant: StorageMode }>("SELECT variant FROM schema_migrations WHERE variant IS NOT NULL LIMIT 1");
  return res.rows[0]?.variant ?? 'partitioned';
}
