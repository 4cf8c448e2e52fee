import { checkCredentials } from '../auth/credentials.js';
import { isSameOrigin, newCsrfToken, tokensMatch, type OriginHeaders } from '../auth/csrf.js';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { Sessions } from '../auth/sessions.js';
import { readBody } from '../http/body-reader.js';
import { clientIp } from '../http/client-ip.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../http/uws.js';
import type { Logger } from '../observability/logger.js';
import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import { cookieNames, parseCookies, setCookie } from './cookies.js';
import { APP_CSS, FAVICON_SVG, devicesPage, formExpiredPage, loginPage, messagePage, type DeviceRow } from './pages.js';
import { createHtmlWriter, type WebReply } from './respond-html.js';

export interface WebDeps {
  pool: Pool;
  sessions: Sessions;
  /** The same throttle as the mobile login: failures through either count together. */
  throttle: LoginThrottle;
  log: Logger;
  tls: boolean;
  /** COOKIE_SECURE=1: Secure __Host- cookies on plain HTTP, for a service behind a TLS proxy. */
  cookieSecure: boolean;
  /** TRUST_PROXY=1: the client address comes from X-Forwarded-For (see http/client-ip.ts). */
  trustProxy: boolean;
}

interface WebRequest {
  cookies: Map<string, string>;
  origin: OriginHeaders;
  ip: string;
  /** The urlencoded form of a POST; empty for GET. */
  form: URLSearchParams;
}

type Handler = (req: WebRequest) => Promise<WebReply>;

const MAX_FORM_BYTES = 8 * 1024;
// The pre-session CSRF cookie lives as long as a login form may sit open.
const LOGIN_CSRF_MAX_AGE_S = 3600;

const expired = (reloadPath: string): WebReply => ({ status: 403, body: formExpiredPage(reloadPath) });

/** GET/POST /login, POST /logout, GET /devices and the two static assets: the browser side of SPEC §4.3. */
export function registerWebRoutes(app: TemplatedApp, deps: WebDeps): void {
  const { pool, sessions, throttle } = deps;
  const secure = deps.tls || deps.cookieSecure;
  const names = cookieNames(secure);
  // Behind a TLS proxy (COOKIE_SECURE=1 on plain HTTP) the browser's origin is https while we see http.
  const schemes = deps.tls ? ['https'] : deps.cookieSecure ? ['http', 'https'] : ['http'];
  const write = createHtmlWriter(deps.tls);
  const clearSession = setCookie(names.session, '', secure, 0);

  const route = (method: 'get' | 'post', pattern: string, handler: Handler) => {
    app[method](pattern, (res: HttpResponse, req: HttpRequest) => {
      const request: WebRequest = {
        cookies: parseCookies(req.getHeader('cookie')),
        origin: { origin: req.getHeader('origin'), secFetchSite: req.getHeader('sec-fetch-site'), host: req.getHeader('host') },
        ip: clientIp(res, req, deps.trustProxy),
        form: new URLSearchParams(),
      };
      let aborted = false;
      res.onAborted(() => { aborted = true; });
      const reply = method === 'get' ? handler(request) : readBody(res, MAX_FORM_BYTES).then((b) => {
        if (!b.ok) return { status: 413, body: messagePage('Form too large', 'The form was larger than this service accepts.') };
        // Origin first: a cross-site POST changes nothing and learns nothing.
        if (!isSameOrigin(request.origin, schemes)) return expired(pattern === '/login' ? '/login' : '/devices');
        request.form = new URLSearchParams(b.body.toString('utf8'));
        return handler(request);
      });
      reply.catch((err: unknown): WebReply => {
        deps.log.error({ err }, `${method.toUpperCase()} ${pattern} failed`);
        return { status: 503, body: messagePage('Service unavailable', 'The service is temporarily unavailable. Retry shortly.'), headers: { 'Retry-After': '2' } };
      }).then((r) => { if (!aborted) write(res, r); });
    });
  };

  /** Not logged in (or the session expired): to the login form, dropping a dead cookie. */
  const toLogin = (req: WebRequest): WebReply =>
    ({ status: 303, location: '/login', setCookies: req.cookies.has(names.session) ? [clearSession] : [] });

  route('get', '/login', async () => {
    // Pre-session CSRF: double submit of a random token in a short-lived cookie and in the form.
    const token = newCsrfToken();
    return { status: 200, body: loginPage(token), setCookies: [setCookie(names.loginCsrf, token, secure, LOGIN_CSRF_MAX_AGE_S)] };
  });

  route('post', '/login', async (req) => {
    const csrf = req.cookies.get(names.loginCsrf);
    if (!tokensMatch(req.form.get('_csrf'), csrf)) return expired('/login');
    const email = (req.form.get('email') ?? '').trim();
    const password = req.form.get('password') ?? '';
    const again = (status: number, message: string, headers?: Record<string, string>): WebReply =>
      ({ status, body: loginPage(csrf!, email, message), headers });
    if (!email || !password) return again(400, 'Enter your email and password.');
    const wait = throttle.retryAfterS(email, req.ip);
    if (wait > 0) return again(429, 'Too many failed logins. Try again later.', { 'Retry-After': String(wait) });
    // Counted as a failure before bcrypt runs, so a burst of parallel guesses cannot all pass the check above.
    const attempt = throttle.begin(email, req.ip);
    const user = await checkCredentials(pool, email, password);
    if (!user) return again(401, 'Invalid email or password.');
    attempt.succeeded();
    // A session id from before login is never reused: the old one ends, and a new one is issued.
    const previous = req.cookies.get(names.session);
    if (previous) await sessions.destroy(previous);
    const session = await sessions.create(user.id);
    return {
      status: 303, location: '/devices',
      setCookies: [setCookie(names.session, session.id, secure), setCookie(names.loginCsrf, '', secure, 0)],
    };
  });

  route('post', '/logout', async (req) => {
    const id = req.cookies.get(names.session);
    const session = await sessions.authenticate(id);
    if (!session) return toLogin(req);
    if (!tokensMatch(req.form.get('_csrf'), session.csrfToken)) return expired('/devices');
    await sessions.destroy(id!);
    return { status: 303, location: '/login', setCookies: [clearSession] };
  });

  // State never changes on GET.
  route('get', '/logout', async () => ({
    status: 405, body: messagePage('Method not allowed', 'Log out with the button on the devices page.'), headers: { Allow: 'POST' },
  }));

  route('get', '/devices', async (req) => {
    const session = await sessions.authenticate(req.cookies.get(names.session));
    if (!session) return toLogin(req);
    const { user } = session;
    const res = await pool.query<DeviceRow>(q.listVisibleDevices, [user.id, user.role === 'admin', null]);
    return { status: 200, body: devicesPage(user.email, user.role, session.csrfToken, res.rows) };
  });

  route('get', '/', async () => ({ status: 303, location: '/devices' }));

  const asset = (path: string, body: string, contentType: string) =>
    route('get', path, async () => ({ status: 200, body, contentType, headers: { 'Cache-Control': 'public, max-age=3600' } }));
  asset('/static/app.css', APP_CSS, 'text/css; charset=utf-8');
  // Named by the pages, so the browser does not ask for a /favicon.ico that 404s.
  asset('/static/favicon.svg', FAVICON_SVG, 'image/svg+xml');
}
