import { checkCredentials } from '../auth/credentials.js';
import { newCsrfToken, tokensMatch } from '../auth/csrf.js';
import type { LoginThrottle } from '../auth/login-throttle.js';
import type { Sessions } from '../auth/sessions.js';
import type { LiveHub } from '../live/hub.js';
import type { Pool } from '../store/db.js';
import { setCookie } from './cookies.js';
import { loginPage, messagePage } from './pages.js';
import type { WebReply } from './respond-html.js';
import { formExpired, type WebRouter } from './router.js';

export interface AuthRouteDeps {
  pool: Pool;
  sessions: Sessions;
  /** The same throttle as the mobile login: failures through either count together. */
  throttle: LoginThrottle;
  /** Ends the session's live sockets at logout. */
  live?: Pick<LiveHub, 'endCredential'>;
}

// The pre-session CSRF cookie lives as long as a login form may sit open.
const LOGIN_CSRF_MAX_AGE_S = 3600;

/** GET/POST /login and POST /logout (SPEC §4.3). */
export function registerAuthRoutes(router: WebRouter, deps: AuthRouteDeps): void {
  const { pool, sessions, throttle } = deps;
  const { names, secure } = router;

  router.open('get', '/login', async () => {
    // Pre-session CSRF: double submit of a random token in a short-lived cookie and in the form.
    const token = newCsrfToken();
    return { status: 200, body: loginPage(token), setCookies: [setCookie(names.loginCsrf, token, secure, LOGIN_CSRF_MAX_AGE_S)] };
  });

  router.open('post', '/login', async (req) => {
    const csrf = req.cookies.get(names.loginCsrf);
    if (!tokensMatch(req.form.get('_csrf'), csrf)) return formExpired('/login');
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

  router.action('/logout', async (req) => {
    await sessions.destroy(req.cookies.get(names.session)!);
    deps.live?.endCredential(req.session.idHash);
    return { status: 303, location: '/login', setCookies: [setCookie(names.session, '', secure, 0)] };
  });

  // State never changes on GET.
  router.open('get', '/logout', async () => ({
    status: 405, body: messagePage('Method not allowed', 'Log out with the button at the top of every page.'), headers: { Allow: 'POST' },
  }));
}
