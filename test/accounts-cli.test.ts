// Account management from the command line, run as operators run it (a child process on the service's
// database), and its effect on a running service: disabled users and changed passwords lose every credential.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../dist/src/auth/users.js';
import { startTestService, type TestService } from './support/service.js';
import { runCli, type CliResult } from './support/cli.js';

const PASSWORD = 'correct horse battery';

const cli = (args: string[], databaseUrl: string, timeoutMs = 60_000): Promise<CliResult> => runCli(args, { DATABASE_URL: databaseUrl }, timeoutMs);

describe('account commands: user:list, user:disable, user:enable, user:set-password', () => {
  let t: TestService;
  let alice: { id: number; email: string };
  let bob: { id: number; email: string };
  const run = (...args: string[]) => cli(args, t.databaseUrl);
  const ok = async (...args: string[]) => {
    const r = await run(...args);
    expect(r.stderr, `${args[0]} stderr`).toBe('');
    expect(r.code).toBe(0);
    return r.json;
  };
  const login = (email: string, password: string) => t.post('/api/mobile/login', { email, password });
  const loginToken = async (email: string, password = PASSWORD) => {
    const r = await login(email, password);
    expect(r.status, `login ${email}`).toBe(200);
    return r.json.data.token as string;
  };
  const devicesStatus = async (token: string) =>
    (await fetch(`${t.baseUrl}/api/mobile/devices`, { headers: { Authorization: `Bearer ${token}` } })).status;
  /** A browser session row, as the web login stores it: only the id's hash. */
  const addSession = (userId: number) => t.db.query(
    `INSERT INTO sessions (id_hash, user_id, csrf_token, expires_at) VALUES ($1, $2, $3, now() + interval '1 hour')`,
    [crypto.randomBytes(32).toString('hex'), userId, crypto.randomBytes(16).toString('hex')]);
  const count = async (sql: string, params: unknown[]) => (await t.db.query(sql, params)).rows[0].n as number;
  const sessionsOf = (userId: number) => count('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [userId]);
  const liveTokensOf = (userId: number) => count('SELECT count(*)::int AS n FROM api_access_tokens WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
  const hashOf = async (userId: number) => (await t.db.query('SELECT password_hash FROM users WHERE id = $1', [userId])).rows[0].password_hash as string;

  beforeAll(async () => {
    t = await startTestService();
    [alice, bob] = await Promise.all([
      createUser(t.db, 'alice@example.com', PASSWORD, 'user'),
      createUser(t.db, 'bob@example.com', PASSWORD, 'admin'),
    ]);
  });
  afterAll(async () => { await t?.close(); });

  it('user:list prints id, email, role, created_at and disabled_at of every user, and never a password hash', async () => {
    const r = await run('user:list');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/password|\$2[aby]\$/);
    const ids = r.json.map((u: any) => u.id);
    expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y)); // oldest first
    expect(r.json.map((u: any) => [u.email, u.role, u.disabled_at]).sort()).toEqual([
      ['admin@test.local', 'admin', null], ['alice@example.com', 'user', null], ['bob@example.com', 'admin', null]]);
    for (const u of r.json) {
      expect(Object.keys(u)).toEqual(['id', 'email', 'role', 'created_at', 'disabled_at']);
      expect(u.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('user:disable ends the user\'s sessions and mobile tokens at once, and their login gets 401', async () => {
    const [aliceToken, bobToken] = await Promise.all([loginToken('alice@example.com'), loginToken('bob@example.com')]);
    await Promise.all([addSession(alice.id), addSession(alice.id), addSession(bob.id)]);
    expect(await devicesStatus(aliceToken)).toBe(200);

    expect(await ok('user:disable', '--email', 'ALICE@example.com')).toEqual({ id: alice.id, email: 'alice@example.com', role: 'user', disabled: true });
    const row = (await t.db.query('SELECT disabled_at FROM users WHERE id = $1', [alice.id])).rows[0];
    expect(row.disabled_at).toBeInstanceOf(Date);
    expect(await sessionsOf(alice.id)).toBe(0);
    expect(await liveTokensOf(alice.id)).toBe(0);
    expect(await devicesStatus(aliceToken)).toBe(401);
    const refused = await login('alice@example.com', PASSWORD);
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual({ status: 'error', error: 'Invalid email or password.' });

    // Another user keeps their credentials.
    expect(await devicesStatus(bobToken)).toBe(200);
    expect(await sessionsOf(bob.id)).toBe(1);

    // Disabling again succeeds and keeps the first timestamp; user:list shows it.
    expect(await ok('user:disable', '--email', 'alice@example.com')).toMatchObject({ id: alice.id, disabled: true });
    expect((await t.db.query('SELECT disabled_at FROM users WHERE id = $1', [alice.id])).rows[0].disabled_at).toEqual(row.disabled_at);
    const listed = (await ok('user:list')).find((u: any) => u.id === alice.id);
    expect(listed.disabled_at).toBe(row.disabled_at.toISOString());
  });

  it('user:enable lets a disabled user log in again while their old tokens stay revoked', async () => {
    const old = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_access_tokens WHERE user_id = $1', [alice.id]);
    expect(old.rows[0].n).toBeGreaterThan(0);
    expect(await ok('user:enable', '--email', 'alice@example.com')).toEqual({ id: alice.id, email: 'alice@example.com', role: 'user', disabled: false });
    expect((await t.db.query('SELECT disabled_at FROM users WHERE id = $1', [alice.id])).rows[0].disabled_at).toBeNull();
    expect(await liveTokensOf(alice.id)).toBe(0);
    const token = await loginToken('alice@example.com');
    expect(await devicesStatus(token)).toBe(200);
    expect(await liveTokensOf(alice.id)).toBe(1);
  });

  it('user:set-password ends every session and mobile token, and only the new password logs in', async () => {
    const oldToken = await loginToken('bob@example.com');
    const oldHash = await hashOf(bob.id);
    expect(await sessionsOf(bob.id)).toBe(1);

    expect(await ok('user:set-password', '--email', 'Bob@Example.com', '--password', 'a brand new secret')).toEqual({ id: bob.id, email: 'bob@example.com', role: 'admin' });
    const newHash = await hashOf(bob.id);
    expect(newHash).not.toBe(oldHash);
    expect(newHash).toMatch(/^\$2[aby]\$12\$/);
    expect(newHash).not.toContain('brand new');
    expect(await sessionsOf(bob.id)).toBe(0);
    expect(await liveTokensOf(bob.id)).toBe(0);
    expect(await devicesStatus(oldToken)).toBe(401);

    const [withOld, withNew] = await Promise.all([login('bob@example.com', PASSWORD), login('bob@example.com', 'a brand new secret')]);
    expect(withOld.status).toBe(401);
    expect(withNew.status).toBe(200);
    expect(await devicesStatus(withNew.json.data.token)).toBe(200);
  });

  it('user:set-password refuses 7 and 73 bytes without truncating, leaving the old password and tokens working, and accepts 72', async () => {
    const token = await loginToken('alice@example.com');
    const before = await hashOf(alice.id);
    const p72 = 'é'.repeat(36); // 72 bytes in UTF-8
    const [short, long] = await Promise.all([
      run('user:set-password', '--email', 'alice@example.com', '--password', 'x'.repeat(7)),
      run('user:set-password', '--email', 'alice@example.com', '--password', `${p72}x`),
    ]);
    expect(short.code).not.toBe(0);
    expect(short.stdout).toBe('');
    expect(short.stderr).toMatch(/at least 8 bytes/);
    expect(long.code).not.toBe(0);
    expect(long.stdout).toBe('');
    expect(long.stderr).toMatch(/at most 72 bytes/);
    expect(await hashOf(alice.id)).toBe(before);
    expect(await devicesStatus(token)).toBe(200);
    // Never truncated: the first 72 bytes of the refused password do not log in; the old password does.
    const [prefix, old] = await Promise.all([login('alice@example.com', p72), login('alice@example.com', PASSWORD)]);
    expect(prefix.status).toBe(401);
    expect(old.status).toBe(200);

    expect(await ok('user:set-password', '--email', 'alice@example.com', '--password', p72)).toMatchObject({ id: alice.id });
    expect((await login('alice@example.com', p72)).status).toBe(200);
  });

  it('fails on an unknown email with a message on stderr, a non-zero exit and no change', async () => {
    const before = (await t.db.query('SELECT id, password_hash, disabled_at FROM users ORDER BY id')).rows;
    const answers = await Promise.all([
      run('user:disable', '--email', 'nobody@example.com'),
      run('user:enable', '--email', 'nobody@example.com'),
      run('user:set-password', '--email', 'nobody@example.com', '--password', 'long enough secret'),
    ]);
    for (const r of answers) {
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe('No user with email nobody@example.com.\n');
    }
    const missing = await run('user:set-password', '--email', 'alice@example.com');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/^Missing --password\.\nUsage: /);
    expect(missing.stderr).toContain('user:set-password --email E --password P');
    expect((await t.db.query('SELECT id, password_hash, disabled_at FROM users ORDER BY id')).rows).toEqual(before);
  });
});
