import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { startTestService, type TestService } from './support/service.js';
import { cookieValue, formCsrf, get, logIn, postForm, setCookieLine } from './support/web-client.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const PASSWORD = 'correct horse battery';
const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

describe('browser sessions: login, devices page, logout and timeouts', () => {
  let t: TestService;
  let clock = Date.parse('2026-03-01T08:00:00Z');
  const sessionRows = async (userId: number) =>
    (await t.db.query('SELECT id_hash, csrf_token, created_at, last_seen_at, expires_at FROM sessions WHERE user_id = $1', [userId])).rows;
  const devicesStatus = async (cookie: string) => {
    const r = await get(`${t.baseUrl}/devices`, { cookie });
    return r.status === 303 ? `303 ${r.headers.location}` : String(r.status);
  };

  let alice: { id: number };
  let bob: { id: number };
  beforeAll(async () => {
    t = await startTestService({}, { now: () => clock });
    alice = await createUser(t.db, 'alice@example.com', PASSWORD, 'user');
    bob = await createUser(t.db, 'bob@example.com', PASSWORD, 'user');
  });
  afterAll(async () => { await t?.close(); });

  it('issues a new session id at login, never the cookie sent before it, and stores only its SHA-256', async () => {
    const planted = crypto.randomBytes(32).toString('base64url');
    const s = await logIn(t.baseUrl, 'alice@example.com', PASSWORD, { cookie: `sid=${planted}` });
    expect(s.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.sid).not.toBe(planted);
    expect(s.response.headers.location).toBe('/devices');
    const rows = await sessionRows(alice.id);
    expect(rows.map((r) => r.id_hash)).toEqual([sha256(s.sid)]);
    const raw = await t.db.query("SELECT count(*)::int AS n FROM sessions WHERE position($1 in id_hash || ' ' || csrf_token) > 0", [s.sid]);
    expect(raw.rows[0].n).toBe(0);
    expect(await devicesStatus(`sid=${planted}`)).toBe('303 /login');
    expect(await devicesStatus(s.cookie)).toBe('200');
  });

  it('refuses the old session id after a second login, which replaces it', async () => {
    const first = await logIn(t.baseUrl, 'bob@example.com', PASSWORD);
    const second = await logIn(t.baseUrl, 'bob@example.com', PASSWORD, { cookie: first.cookie });
    expect(second.sid).not.toBe(first.sid);
    expect(second.csrf).not.toBe(first.csrf);
    expect(await devicesStatus(first.cookie)).toBe('303 /login');
    expect(await devicesStatus(second.cookie)).toBe('200');
    expect((await sessionRows(bob.id)).map((r) => r.id_hash)).toEqual([sha256(second.sid)]);
  });

  it('ends the session on the server at logout, clears the cookie and refuses the old id afterwards', async () => {
    const s = await logIn(t.baseUrl, 'bob@example.com', PASSWORD);
    const out = await postForm(`${t.baseUrl}/logout`, { _csrf: s.csrf }, { cookie: s.cookie });
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/login');
    expect(setCookieLine(out, 'sid')).toBe('sid=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0');
    expect((await sessionRows(bob.id)).map((r) => r.id_hash)).not.toContain(sha256(s.sid));
    expect(await devicesStatus(s.cookie)).toBe('303 /login');
    // Replaying the logout with the old cookie and token changes nothing and just goes to the login form.
    const again = await postForm(`${t.baseUrl}/logout`, { _csrf: s.csrf }, { cookie: s.cookie });
    expect(again.status).toBe(303);
    expect(again.headers.location).toBe('/login');
  });

  it('ends a session that stays idle for SESSION_IDLE_MIN (30 minutes) and deletes it, while use keeps it alive', async () => {
    const s = await logIn(t.baseUrl, 'alice@example.com', PASSWORD);
    clock += 30 * MIN - 1000;
    expect(await devicesStatus(s.cookie)).toBe('200');
    clock += 30 * MIN - 1000; // an hour after login, but under 30 minutes since the last request
    expect(await devicesStatus(s.cookie)).toBe('200');
    const seen = (await sessionRows(alice.id)).find((r) => r.id_hash === sha256(s.sid));
    expect(seen?.last_seen_at.getTime()).toBe(clock);
    clock += 30 * MIN;
    expect(await devicesStatus(s.cookie)).toBe('303 /login');
    expect((await sessionRows(alice.id)).map((r) => r.id_hash)).not.toContain(sha256(s.sid));
    clock -= 1000; // the clock going back does not bring a deleted session back
    expect(await devicesStatus(s.cookie)).toBe('303 /login');
  });

  it('ends a session at SESSION_ABSOLUTE_H (12 hours) after login even when it is used all along', async () => {
    const loginAt = clock;
    const s = await logIn(t.baseUrl, 'alice@example.com', PASSWORD);
    const row = (await sessionRows(alice.id)).find((r) => r.id_hash === sha256(s.sid));
    expect(row?.expires_at.getTime()).toBe(loginAt + 12 * HOUR);
    for (let k = 1; k <= 35; k++) {
      clock = loginAt + k * 20 * MIN;
      expect(await devicesStatus(s.cookie)).toBe('200');
    }
    clock = loginAt + 12 * HOUR - 1000;
    expect(await devicesStatus(s.cookie)).toBe('200');
    clock = loginAt + 12 * HOUR;
    expect(await devicesStatus(s.cookie)).toBe('303 /login');
    expect((await sessionRows(alice.id)).map((r) => r.id_hash)).not.toContain(sha256(s.sid));
  });

  it("lists only the user's own devices with every value HTML-escaped, and an admin sees all of them", async () => {
    await createDevice(t.db, alice.id, '<script>alert("x")</script> & co', 'health');
    await createDevice(t.db, bob.id, 'bob-only-device', 'fleet');
    const s = await logIn(t.baseUrl, 'alice@example.com', PASSWORD);
    const page = await get(`${t.baseUrl}/devices`, { cookie: s.cookie });
    expect(page.text).toMatch(/<a href="\/devices\/\d+">&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; co<\/a><\/td>\n<td data-label="Module">health<\/td>/);
    // The page's own scripts are external files: no other script element may appear.
    expect(page.text.match(/<script[^>]*>/g)?.every((tag) => /^<script src="\/static\/[\w.]+\.js\?v=[0-9a-f]{12}" defer>$/.test(tag))).toBe(true);
    expect(page.text).toContain('never');
    expect(page.text).not.toContain('bob-only-device');
    const admin = await logIn(t.baseUrl, 'admin@test.local', 'test-admin-password');
    const all = await get(`${t.baseUrl}/devices`, { cookie: admin.cookie });
    expect(all.text).toContain('bob-only-device');
    expect(all.text).toContain('&lt;script&gt;');
  });

  it('sends a visitor without a session from /devices and / to the login form', async () => {
    expect(await devicesStatus('')).toBe('303 /login');
    expect(await devicesStatus('sid=not-a-session')).toBe('303 /login');
    const root = await get(`${t.baseUrl}/`);
    expect(root.status).toBe(303);
    expect(root.headers.location).toBe('/devices');
  });

  it('re-renders the form with 401 and the same generic message for a wrong password and an unknown email', async () => {
    const tryLogin = async (email: string) => {
      const form = await get(`${t.baseUrl}/login`);
      const token = cookieValue(form, 'login_csrf')!;
      return postForm(`${t.baseUrl}/login`, { _csrf: formCsrf(form.text), email, password: 'wrong password!' }, { cookie: `login_csrf=${token}` });
    };
    const wrong = await tryLogin('alice@example.com');
    const unknown = await tryLogin('nobody@example.com');
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401);
      expect(r.text).toContain('Invalid email or password.');
      expect(r.setCookies.some((c) => c.startsWith('sid='))).toBe(false);
    }
    expect(unknown.text.replace(/value="[^"]*"/g, '')).toBe(wrong.text.replace(/value="[^"]*"/g, ''));
  });

  it('throttles the form login together with the mobile login: the 11th failure for one account in 15 minutes gets 429', async () => {
    const email = 'ghost@example.com';
    const formLogin = async (password: string) => {
      const form = await get(`${t.baseUrl}/login`);
      return postForm(`${t.baseUrl}/login`, { _csrf: formCsrf(form.text), email, password }, { cookie: `login_csrf=${cookieValue(form, 'login_csrf')}` });
    };
    for (let i = 0; i < 5; i++) expect((await t.post('/api/mobile/login', { email, password: 'wrong password!' })).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await formLogin('wrong password!')).status).toBe(401);
    const limited = await formLogin('wrong password!');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toContain('Too many failed logins. Try again later.');
    expect(limited.text).toContain(`value="${email}"`);
  });

  it('serves pages as HTML with the security headers and no-store, and the stylesheet with a cache header', async () => {
    for (const page of [await get(`${t.baseUrl}/login`), await get(`${t.baseUrl}/logout`)]) {
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.headers['content-security-policy']).toBe("default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'");
      expect(page.text).not.toMatch(/<script|style=/i);
    }
    const css = await get(`${t.baseUrl}/static/app.css`);
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=3600');
    expect(css.headers['x-content-type-options']).toBe('nosniff');
  });

  it('links every asset by its content hash, served immutable for a year with its content type; a stale version gets an hour', async () => {
    const user = await createUser(t.db, `assets-${Date.now()}@example.com`, PASSWORD, 'user');
    const s = await logIn(t.baseUrl, user.email, PASSWORD);
    const page = await get(`${t.baseUrl}/devices`, { cookie: s.cookie });
    const links = [...page.text.matchAll(/(?:href|src)="(\/static\/[^"?]+)\?v=([0-9a-f]{12})"/g)].map((m) => ({ path: m[1], v: m[2] }));
    const types: Record<string, string> = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.svg': 'image/svg+xml' };
    expect(links.map((l) => l.path)).toEqual(expect.arrayContaining(['/static/app.css', '/static/favicon.svg', '/static/live.js', '/static/dashboard.js']));
    for (const { path, v } of links) {
      const r = await get(`${t.baseUrl}${path}?v=${v}`);
      expect(r.status, path).toBe(200);
      expect(r.headers['content-type'], path).toBe(types[path.slice(path.lastIndexOf('.'))]);
      expect(r.headers['cache-control'], path).toBe('public, max-age=31536000, immutable');
      const hash = crypto.createHash('sha256').update(Buffer.from(r.text, 'utf8')).digest('hex').slice(0, 12);
      expect(hash, path).toBe(v);
      expect((await get(`${t.baseUrl}${path}?v=000000000000`)).headers['cache-control'], path).toBe('public, max-age=3600');
    }
  });
});
