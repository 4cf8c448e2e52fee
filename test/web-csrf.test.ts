import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSameOrigin, tokensMatch } from '../dist/src/auth/csrf.js';
import { createUser } from '../dist/src/auth/users.js';
import { startTestService, type TestService } from './support/service.js';
import { cookieValue, formCsrf, get, logIn, postForm, type LoggedIn, type WebResponse } from './support/web-client.js';

const PASSWORD = 'correct horse battery';

describe('CSRF and Origin checks on every browser POST', () => {
  let t: TestService;
  let carol: LoggedIn;
  let dave: LoggedIn;
  beforeAll(async () => {
    t = await startTestService();
    await createUser(t.db, 'carol@example.com', PASSWORD, 'user');
    await createUser(t.db, 'dave@example.com', PASSWORD, 'user');
    carol = await logIn(t.baseUrl, 'carol@example.com', PASSWORD);
    dave = await logIn(t.baseUrl, 'dave@example.com', PASSWORD);
  });
  afterAll(async () => { await t?.close(); });

  const expectReloadPage = (r: WebResponse) => {
    expect(r.status).toBe(403);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.text).toContain('This form has expired');
    expect(r.text).toContain('Reload the page and try again.');
    expect(r.setCookies).toEqual([]);
  };
  const alive = async (s: LoggedIn) => (await get(`${t.baseUrl}/devices`, { cookie: s.cookie })).status === 200;
  const sessionCount = async (email: string) =>
    (await t.db.query('SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1', [email])).rows[0].n as number;
  const loginForm = async () => {
    const form = await get(`${t.baseUrl}/login`);
    return { field: formCsrf(form.text), cookie: `login_csrf=${cookieValue(form, 'login_csrf')}` };
  };

  it('refuses a logout with no CSRF token, or an empty one, with 403 and a reload page, and the session lives on', async () => {
    expectReloadPage(await postForm(`${t.baseUrl}/logout`, {}, { cookie: carol.cookie }));
    expectReloadPage(await postForm(`${t.baseUrl}/logout`, { _csrf: '' }, { cookie: carol.cookie }));
    expect(await alive(carol)).toBe(true);
  });

  it('refuses a stale CSRF token from a previous session of the same user', async () => {
    const old = await logIn(t.baseUrl, 'carol@example.com', PASSWORD);
    expect((await postForm(`${t.baseUrl}/logout`, { _csrf: old.csrf }, { cookie: old.cookie })).status).toBe(303);
    const current = await logIn(t.baseUrl, 'carol@example.com', PASSWORD);
    expectReloadPage(await postForm(`${t.baseUrl}/logout`, { _csrf: old.csrf }, { cookie: current.cookie }));
    expect(await alive(current)).toBe(true);
  });

  it("refuses another session's CSRF token", async () => {
    expectReloadPage(await postForm(`${t.baseUrl}/logout`, { _csrf: dave.csrf }, { cookie: carol.cookie }));
    expectReloadPage(await postForm(`${t.baseUrl}/logout`, { _csrf: carol.csrf }, { cookie: dave.cookie }));
    expect(await alive(carol)).toBe(true);
    expect(await alive(dave)).toBe(true);
  });

  it('refuses a login post without the pre-session token, or whose form token differs from its cookie', async () => {
    const before = await sessionCount('carol@example.com');
    const a = await loginForm();
    const b = await loginForm();
    const creds = { email: 'carol@example.com', password: PASSWORD };
    expectReloadPage(await postForm(`${t.baseUrl}/login`, creds, { cookie: a.cookie }));
    expectReloadPage(await postForm(`${t.baseUrl}/login`, { ...creds, _csrf: a.field }));
    expectReloadPage(await postForm(`${t.baseUrl}/login`, { ...creds, _csrf: a.field }, { cookie: b.cookie }));
    // A session's CSRF token is no login token either.
    expectReloadPage(await postForm(`${t.baseUrl}/login`, { ...creds, _csrf: carol.csrf }, { cookie: b.cookie }));
    expect(await sessionCount('carol@example.com')).toBe(before);
    const ok = await postForm(`${t.baseUrl}/login`, { ...creds, _csrf: b.field }, { cookie: b.cookie });
    expect(ok.status).toBe(303);
    expect(await sessionCount('carol@example.com')).toBe(before + 1);
  });

  it('refuses a cross-origin Origin header with 403 even when the token is right', async () => {
    const port = new URL(t.baseUrl).port;
    for (const origin of ['http://evil.example', `http://localhost:${port}`, `https://127.0.0.1:${port}`, 'http://127.0.0.1:1', 'null']) {
      expectReloadPage(await postForm(`${t.baseUrl}/logout`, { _csrf: carol.csrf }, { cookie: carol.cookie, origin }));
      const f = await loginForm();
      expectReloadPage(await postForm(`${t.baseUrl}/login`, { _csrf: f.field, email: 'carol@example.com', password: PASSWORD }, { cookie: f.cookie, origin }));
    }
    expect(await alive(carol)).toBe(true);
  });

  it('refuses a POST without Origin unless Sec-Fetch-Site says same-origin', async () => {
    const s = await logIn(t.baseUrl, 'dave@example.com', PASSWORD);
    expectReloadPage(await postForm(`${t.baseUrl}/logout`, { _csrf: s.csrf }, { cookie: s.cookie, origin: null }));
    expectReloadPage(await postForm(`${t.baseUrl}/logout`, { _csrf: s.csrf }, { cookie: s.cookie, origin: null, headers: { 'Sec-Fetch-Site': 'cross-site' } }));
    expectReloadPage(await postForm(`${t.baseUrl}/logout`, { _csrf: s.csrf }, { cookie: s.cookie, origin: null, headers: { 'Sec-Fetch-Site': 'same-site' } }));
    expect(await alive(s)).toBe(true);
    const out = await postForm(`${t.baseUrl}/logout`, { _csrf: s.csrf }, { cookie: s.cookie, origin: null, headers: { 'Sec-Fetch-Site': 'same-origin' } });
    expect(out.status).toBe(303);
    expect(await alive(s)).toBe(false);
  });

  it('never changes state on GET: GET /logout is 405 and GET /login with credentials logs no one in', async () => {
    const r = await get(`${t.baseUrl}/logout?_csrf=${encodeURIComponent(carol.csrf)}`, { cookie: carol.cookie });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('POST');
    expect(await alive(carol)).toBe(true);
    const before = await sessionCount('carol@example.com');
    const f = await loginForm();
    const g = await get(`${t.baseUrl}/login?email=carol%40example.com&password=${encodeURIComponent(PASSWORD)}&_csrf=${f.field}`, { cookie: f.cookie });
    expect(g.status).toBe(200);
    expect(g.setCookies.some((c) => c.startsWith('sid='))).toBe(false);
    expect(await sessionCount('carol@example.com')).toBe(before);
  });

  it('compares tokens in constant time over hashes, so tokens of any length compare without throwing', () => {
    expect(tokensMatch('abc', 'abc')).toBe(true);
    expect(tokensMatch('abc', 'abcd')).toBe(false);
    expect(tokensMatch('', '')).toBe(false);
    expect(tokensMatch(null, 'abc')).toBe(false);
    expect(isSameOrigin({ origin: 'HTTP://Example.COM:80', secFetchSite: '', host: 'example.com:80' }, ['http'])).toBe(true);
    expect(isSameOrigin({ origin: 'http://example.com', secFetchSite: 'same-origin', host: '' }, ['http'])).toBe(false);
  });
});
