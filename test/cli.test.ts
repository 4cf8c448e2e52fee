// The admin command line, run as operators run it: a child process with JSON on stdout and errors on stderr.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../dist/src/config/load.js';
import { startService } from '../dist/src/main.js';
import { createTestDatabase } from './support/database.js';
import { runCli, type CliResult } from './support/cli.js';

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

const cli = (args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliResult> => runCli(args, env, timeoutMs);

describe('cli on DATABASE_URL', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pool: pg.Pool;
  let env: Record<string, string>;
  const run = (...args: string[]) => cli(args, env);
  const ok = async (...args: string[]) => {
    const r = await run(...args);
    expect(r.stderr, `${args[0]} stderr`).toBe('');
    expect(r.code).toBe(0);
    return r.json;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    pool.on('error', () => {}); // DROP DATABASE ... WITH (FORCE) ends idle clients: not a test failure
    env = { DATABASE_URL: db.url };
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('migrate prints JSON and creates the schema', async () => {
    expect(await ok('migrate')).toEqual({ migrated: true, storage: 'partitioned' });
    expect((await pool.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n).toBeGreaterThanOrEqual(2);
  });

  it('user:create prints {id, email, role} and stores a bcrypt hash, never the password', async () => {
    const [u, admin] = await Promise.all([
      ok('user:create', '--email', 'Owner@Example.com', '--password', 'correct horse battery'),
      ok('user:create', '--email', 'admin@example.com', '--password', 'another secret', '--role', 'admin'),
    ]);
    expect(u).toEqual({ id: expect.any(Number), email: 'Owner@Example.com', role: 'user' });
    const row = (await pool.query('SELECT password_hash, role FROM users WHERE id = $1', [u.id])).rows[0];
    expect(row.password_hash).toMatch(/^\$2[aby]\$12\$/);
    expect(row.password_hash).not.toContain('correct horse');
    expect(admin).toEqual({ id: expect.any(Number), email: 'admin@example.com', role: 'admin' });
  });

  it('user:create refuses a duplicate email whatever its case, on stderr with a non-zero exit', async () => {
    const r = await run('user:create', '--email', 'OWNER@example.COM', '--password', 'whatever123');
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/already exists/);
    expect((await pool.query(`SELECT count(*)::int AS n FROM users WHERE lower(email) = 'owner@example.com'`)).rows[0].n).toBe(1);
  });

  it('user:create accepts passwords of 8 to 72 bytes and refuses 7 and 73 bytes', async () => {
    const [p7, p8, p72, p73] = await Promise.all([
      run('user:create', '--email', 'p7@example.com', '--password', 'x'.repeat(7)),
      run('user:create', '--email', 'p8@example.com', '--password', 'x'.repeat(8)),
      run('user:create', '--email', 'p72@example.com', '--password', 'é'.repeat(36)),
      run('user:create', '--email', 'p73@example.com', '--password', `${'é'.repeat(36)}x`),
    ]);
    expect(p7.code).not.toBe(0);
    expect(p7.stderr).toMatch(/at least 8 bytes/);
    expect(p8.code).toBe(0);
    expect(p72.code).toBe(0);
    expect(p73.code).not.toBe(0);
    expect(p73.stderr).toMatch(/at most 72 bytes/);
    const stored = await pool.query(`SELECT email FROM users WHERE email ~ '^p[0-9]+@' ORDER BY email`);
    expect(stored.rows.map((r) => r.email)).toEqual(['p72@example.com', 'p8@example.com']);
  });

  let device: { id: number; name: string; module: string; token: string };

  it('device:create prints the token once and stores only its SHA-256', async () => {
    device = await ok('device:create', '--owner', 'owner@example.com', '--name', 'Ward 3 monitor', '--module', 'health');
    expect(device).toEqual({ id: expect.any(Number), name: 'Ward 3 monitor', module: 'health', token: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const row = (await pool.query('SELECT api_token_hash, owner_id, status FROM devices WHERE id = $1', [device.id])).rows[0];
    expect(row.api_token_hash).toBe(sha256(device.token));
    expect(row.status).toBe('offline');
    const tables = await pool.query<{ t: string }>(`SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = 'public'`);
    expect(tables.rows.length).toBeGreaterThan(3);
    for (const { t } of tables.rows) {
      const hit = await pool.query(`SELECT count(*)::int AS n FROM ${t} x WHERE strpos(x::text, $1) > 0`, [device.token]);
      expect(hit.rows[0].n, `token found in ${t}`).toBe(0);
    }
  });

  it('device:create refuses an unknown owner and an unknown module', async () => {
    const [noOwner, badModule] = await Promise.all([
      run('device:create', '--owner', 'nobody@example.com', '--name', 'x', '--module', 'health'),
      run('device:create', '--owner', 'owner@example.com', '--name', 'x', '--module', 'toaster'),
    ]);
    expect(noOwner.code).not.toBe(0);
    expect(noOwner.stderr).toMatch(/No user with email nobody@example.com/);
    expect(badModule.code).not.toBe(0);
    expect(badModule.stderr).toMatch(/health, vehicle, factory, home_infra, worker, fleet/);
    expect((await pool.query('SELECT count(*)::int AS n FROM devices')).rows[0].n).toBe(1);
  });

  it('device:rotate-token prints {id, token} and replaces the stored hash', async () => {
    const r = await ok('device:rotate-token', '--id', String(device.id));
    expect(r).toEqual({ id: device.id, token: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(r.token).not.toBe(device.token);
    expect((await pool.query('SELECT api_token_hash FROM devices WHERE id = $1', [device.id])).rows[0].api_token_hash).toBe(sha256(r.token));
    expect((await pool.query('SELECT count(*)::int AS n FROM devices WHERE api_token_hash = $1', [sha256(device.token)])).rows[0].n).toBe(0);
    const missing = await run('device:rotate-token', '--id', '999999');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/No device with id 999999/);
  });

  it('device:list lists every device, or one owner\'s with --owner', async () => {
    await ok('device:create', '--owner', 'admin@example.com', '--name', 'Forklift 7', '--module', 'vehicle');
    const [all, mine, nobody] = await Promise.all([
      ok('device:list'), ok('device:list', '--owner', 'admin@example.com'), ok('device:list', '--owner', 'nobody@example.com')]);
    expect(all.map((d: any) => [d.name, d.module, d.owner])).toEqual([
      ['Ward 3 monitor', 'health', 'Owner@Example.com'],
      ['Forklift 7', 'vehicle', 'admin@example.com'],
    ]);
    expect(all[0]).toMatchObject({ id: device.id, status: 'offline', last_seen_at: null });
    expect(all[0]).not.toHaveProperty('api_token_hash');
    expect(mine.map((d: any) => d.name)).toEqual(['Forklift 7']);
    expect(nobody).toEqual([]);
  });

  it('device:bulk-create writes a token file matching the database, a progress bar on stderr and JSON on stdout', async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cli-bulk-')), 'tokens.csv');
    try {
      const r = await run('device:bulk-create', '--owner', 'owner@example.com', '--module', 'fleet', '--count', '2500', '--out', out);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ created: 2500, module: 'fleet', out });
      expect(r.stderr).toMatch(/\[#{30}\] 2500\/2500\n$/);
      expect(r.stderr).toMatch(/\] 1000\/2500/);
      expect(fs.statSync(out).mode & 0o777).toBe(0o600);
      const lines = fs.readFileSync(out, 'utf8').trimEnd().split('\n');
      expect(lines[0]).toBe('id,name,token');
      expect(lines).toHaveLength(2501);
      const rows = lines.slice(1).map((l) => l.split(','));
      expect(rows.every((c) => c.length === 3 && /^\d+$/.test(c[0]) && /^[0-9a-f]{64}$/.test(c[2]))).toBe(true);
      expect(new Set(rows.map((c) => c[2])).size).toBe(2500);
      const stored = await pool.query<{ id: number; name: string; api_token_hash: string }>(
        `SELECT id, name, api_token_hash FROM devices WHERE module = 'fleet' ORDER BY id`);
      expect(stored.rows).toHaveLength(2500);
      const byId = new Map(stored.rows.map((d) => [String(d.id), d]));
      for (const [id, name, token] of rows) {
        expect(byId.get(id)?.name).toBe(name);
        expect(byId.get(id)?.api_token_hash).toBe(sha256(token));
      }
    } finally {
      fs.rmSync(path.dirname(out), { recursive: true, force: true });
    }
  });

  it('refuses an unknown command and a missing flag with usage on stderr and a non-zero exit', async () => {
    const [unknown, missing, noValue] = await Promise.all([
      run('device:explode'), run('user:create', '--email', 'x@example.com'), run('device:list', '--owner')]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^Unknown command "device:explode"\.\nUsage: /);
    expect(unknown.stderr).toContain('device:bulk-create --owner E --module M --count N --out FILE');
    expect(missing.code).not.toBe(0);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^Missing --password\.\nUsage: /);
    expect(noValue.code).not.toBe(0);
    expect(noValue.stderr).toMatch(/Flag --owner needs a value/);
  });
});

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

describe('cli on the embedded database', () => {
  it('starts the embedded server itself, and attaches to it while the service runs', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-embedded-'));
    let port = 0;
    for (let i = 0; i < 20 && port === 0; i++) {
      const candidate = 55000 + Math.floor(Math.random() * 5000);
      if (!(await portAnswers(candidate))) port = candidate;
    }
    const env = { DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(port) };
    let service: Awaited<ReturnType<typeof startService>> | null = null;
    try {
      const user = await cli(['user:create', '--email', 'emb@example.com', '--password', 'correct horse battery'], env, 120_000);
      expect(user.stderr).toBe('');
      expect(user.json).toMatchObject({ email: 'emb@example.com', role: 'user' });
      expect(await portAnswers(port)).toBe(false); // the CLI stopped the server it started

      service = await startService(loadConfig({}, { databaseUrl: null, dataDir, embeddedPgPort: port, port: 0, host: '127.0.0.1', logLevel: 'silent', ingestWorkers: 1 }));
      const created = await cli(['device:create', '--owner', 'emb@example.com', '--name', 'e1', '--module', 'worker'], env);
      expect(created.stderr).toBe('');
      expect(created.json.token).toMatch(/^[0-9a-f]{64}$/);
      expect(await portAnswers(port)).toBe(true); // the CLI left the service's server running

      const res = await fetch(`http://127.0.0.1:${service.port}/api/telemetry-ingest`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${created.json.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ data: { heart_rate: 64 } }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true, status: 'ok', inserted: 1, skipped: 0, device_id: created.json.id });
      const check = new pg.Client({ connectionString: service.databaseUrl });
      await check.connect();
      try {
        const rows = await check.query('SELECT metric_name, metric_value FROM telemetry WHERE device_id = $1', [created.json.id]);
        expect(rows.rows).toEqual([{ metric_name: 'heart_rate', metric_value: 64 }]);
      } finally {
        await check.end();
      }
    } finally {
      await service?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    expect(await portAnswers(port)).toBe(false);
  }, 180_000);
});
