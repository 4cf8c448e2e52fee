// A small HTTP(S) client for the browser routes: full control of Cookie, Origin and Host, no redirects
// followed, and a self-signed certificate accepted (the TLS test's).
import http from 'node:http';
import https from 'node:https';

export interface WebResponse { status: number; headers: http.IncomingHttpHeaders; setCookies: string[]; text: string }

export interface RequestOptions {
  cookie?: string;
  /** The Origin header of a POST: the service's own origin unless given; null sends none. */
  origin?: string | null;
  headers?: Record<string, string>;
}

export function send(url: string, method: 'GET' | 'POST', body: string | null, opts: RequestOptions = {}): Promise<WebResponse> {
  const u = new URL(url);
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.cookie) headers.Cookie = opts.cookie;
  if (method === 'POST') {
    const origin = opts.origin === undefined ? u.origin : opts.origin;
    if (origin !== null) headers.Origin = origin;
    headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
    headers['Content-Length'] = String(Buffer.byteLength(body ?? ''));
  }
  const lib = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(u, { method, headers, rejectUnauthorized: false, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, headers: res.headers, setCookies: res.headers['set-cookie'] ?? [], text: Buffer.concat(chunks).toString('utf8'),
      }));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

export const get = (url: string, opts?: RequestOptions) => send(url, 'GET', null, opts);
export const postForm = (url: string, form: Record<string, string>, opts?: RequestOptions) =>
  send(url, 'POST', new URLSearchParams(form).toString(), opts);

/** The whole Set-Cookie line for a cookie name, or undefined. */
export function setCookieLine(r: WebResponse, name: string): string | undefined {
  return r.setCookies.find((c) => c.startsWith(`${name}=`));
}

/** The value a Set-Cookie gives a name, or undefined. */
export function cookieValue(r: WebResponse, name: string): string | undefined {
  return setCookieLine(r, name)?.split(';')[0].slice(name.length + 1);
}

/** The hidden _csrf value of the first form on a page. */
export function formCsrf(page: string): string {
  const m = /name="_csrf" value="([^"]*)"/.exec(page);
  if (!m) throw new Error(`no _csrf field in: ${page.slice(0, 300)}`);
  return m[1];
}

export interface LoggedIn { sid: string; cookie: string; csrf: string; response: WebResponse }

/**
 * Logs in through the form as a browser would: GET /login for the pre-session token, POST it back with the
 * credentials, then reads the session's CSRF token from the devices page.
 */
export async function logIn(baseUrl: string, email: string, password: string, opts: { secure?: boolean; cookie?: string } = {}): Promise<LoggedIn> {
  const [sidName, csrfName] = opts.secure ? ['__Host-sid', '__Host-login_csrf'] : ['sid', 'login_csrf'];
  const form = await get(`${baseUrl}/login`);
  const loginCsrf = cookieValue(form, csrfName);
  if (!loginCsrf) throw new Error(`GET /login set no ${csrfName} cookie: ${form.setCookies.join(' | ')}`);
  const cookie = [`${csrfName}=${loginCsrf}`, ...(opts.cookie ? [opts.cookie] : [])].join('; ');
  const response = await postForm(`${baseUrl}/login`, { _csrf: formCsrf(form.text), email, password }, { cookie });
  const sid = cookieValue(response, sidName);
  if (response.status !== 303 || !sid) throw new Error(`login answered ${response.status}: ${response.text.slice(0, 300)}`);
  const devices = await get(`${baseUrl}/devices`, { cookie: `${sidName}=${sid}` });
  if (devices.status !== 200) throw new Error(`GET /devices after login answered ${devices.status}`);
  return { sid, cookie: `${sidName}=${sid}`, csrf: formCsrf(devices.text), response };
}
