import { isSameOrigin, tokensMatch, type OriginHeaders } from '../auth/csrf.js';
import type { LiveSession, Sessions } from '../auth/sessions.js';
import { readBody } from '../http/body-reader.js';
import { clientIp } from '../http/client-ip.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../http/uws.js';
import type { Logger } from '../observability/logger.js';
import { cookieNames, parseCookies, setCookie, type CookieNames } from './cookies.js';
import { formExpiredPage, messagePage } from './pages.js';
import { createHtmlWriter, type WebReply } from './respond-html.js';

export interface WebRequest {
  cookies: Map<string, string>;
  origin: OriginHeaders;
  ip: string;
  /** The urlencoded form of a POST; empty for GET. */
  form: URLSearchParams;
  /** The query string. */
  query: URLSearchParams;
  /** The values of the pattern's `:name` segments, in order. */
  params: string[];
}

/** A request of a logged-in user: pages and actions get the live session (user, CSRF token). */
export interface SignedInRequest extends WebRequest { session: LiveSession }

export type OpenHandler = (req: WebRequest) => Promise<WebReply>;
export type SignedInHandler = (req: SignedInRequest) => Promise<WebReply>;

export interface WebRouterDeps {
  sessions: Sessions;
  log: Logger;
  tls: boolean;
  /** COOKIE_SECURE=1: Secure __Host- cookies on plain HTTP, for a service behind a TLS proxy. */
  cookieSecure: boolean;
  /** TRUST_PROXY=1: the client address comes from X-Forwarded-For (see http/client-ip.ts). */
  trustProxy: boolean;
}

export interface WebRouter {
  readonly secure: boolean;
  readonly names: CookieNames;
  /** A route anyone may call (the login form). POSTs still pass the Origin check first. */
  open(method: 'get' | 'post', pattern: string, handler: OpenHandler): void;
  /** A GET page for a logged-in user; anyone else is sent to /login. */
  page(pattern: string, handler: SignedInHandler): void;
  /** A POST form of a logged-in user: Origin and the session's CSRF token are checked before the handler runs. */
  action(pattern: string, handler: SignedInHandler): void;
  /** A static asset; cacheControl gets the request's query string (a versioned link may be cached for good). */
  asset(path: string, body: string | Buffer, contentType: string, cacheControl: (query: string) => string): void;
}

const MAX_FORM_BYTES = 16 * 1024;

/** The 403 of a failed CSRF or Origin check: nothing changed; a reload gets a fresh form. */
export const formExpired = (reloadPath: string): WebReply => ({ status: 403, body: formExpiredPage(reloadPath) });

const unavailable = (): WebReply =>
  ({ status: 503, body: messagePage('Service unavailable', 'The service is temporarily unavailable. Retry shortly.'), headers: { 'Retry-After': '2' } });

/**
 * The browser side's request pipeline (SPEC §4.3): cookies, Origin and CSRF checks, the session, the form
 * body, and one place that turns a failure into a 503 page. Route modules only say what a page shows.
 */
export function createWebRouter(app: TemplatedApp, deps: WebRouterDeps): WebRouter {
  const secure = deps.tls || deps.cookieSecure;
  const names = cookieNames(secure);
  // Behind a TLS proxy (COOKIE_SECURE=1 on plain HTTP) the browser's origin is https while we see http.
  const schemes = deps.tls ? ['https'] : deps.cookieSecure ? ['http', 'https'] : ['http'];
  const write = createHtmlWriter(deps.tls);
  const clearSession = setCookie(names.session, '', secure, 0);
  const paramCount = (pattern: string) => pattern.split('/').filter((s) => s.startsWith(':')).length;

  const register = (method: 'get' | 'post', pattern: string, handler: OpenHandler) => {
    const params = paramCount(pattern);
    app[method](pattern, (res: HttpResponse, req: HttpRequest) => {
      // Everything is copied now: the uWS request object dies when this callback returns.
      const request: WebRequest = {
        cookies: parseCookies(req.getHeader('cookie')),
        origin: { origin: req.getHeader('origin'), secFetchSite: req.getHeader('sec-fetch-site'), host: req.getHeader('host') },
        ip: clientIp(res, req, deps.trustProxy),
        form: new URLSearchParams(),
        query: new URLSearchParams(req.getQuery() ?? ''),
        // Raw, not percent-decoded: the pages' parameters are ids (plain digits, see http/params.ts), and decoding
        // a malformed escape such as %ZZ would throw here, outside any handler's error path.
        params: Array.from({ length: params }, (_, i) => req.getParameter(i) ?? ''),
      };
      let aborted = false;
      res.onAborted(() => { aborted = true; });
      const reply = method === 'get' ? handler(request) : readBody(res, MAX_FORM_BYTES).then((b) => {
        if (!b.ok) return { status: 413, body: messagePage('Form too large', 'The form was larger than this service accepts.') };
        // Origin first: a cross-site POST changes nothing and learns nothing.
        if (!isSameOrigin(request.origin, schemes)) return formExpired(pattern === '/login' ? '/login' : '/devices');
        request.form = new URLSearchParams(b.body.toString('utf8'));
        return handler(request);
      });
      reply.catch((err: unknown): WebReply => {
        deps.log.error({ err }, `${method.toUpperCase()} ${pattern} failed`);
        return unavailable();
      }).then((r) => { if (!aborted) write(res, r); });
    });
  };

  /** Not logged in (or the session expired): to the login form, dropping a dead cookie. */
  const toLogin = (req: WebRequest): WebReply =>
    ({ status: 303, location: '/login', setCookies: req.cookies.has(names.session) ? [clearSession] : [] });

  const signedIn = (handler: SignedInHandler, checkCsrf: boolean, reloadPath: string): OpenHandler => async (req) => {
    const session = await deps.sessions.authenticate(req.cookies.get(names.session));
    if (!session) return toLogin(req);
    if (checkCsrf && !tokensMatch(req.form.get('_csrf'), session.csrfToken)) return formExpired(reloadPath);
    return handler({ ...req, session });
  };

  return {
    secure,
    names,
    open: register,
    page: (pattern, handler) => register('get', pattern, signedIn(handler, false, pattern)),
    // The reload link of a refused form leads back to the page the form most likely came from.
    action: (pattern, handler) => register('post', pattern, signedIn(handler, true, '/devices')),
    asset: (path, body, contentType, cacheControl) =>
      app.get(path, (res: HttpResponse, req: HttpRequest) =>
        write(res, { status: 200, body, contentType, headers: { 'Cache-Control': cacheControl(req.getQuery() ?? '') } })),
  };
}
