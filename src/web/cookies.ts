// Cookie names and attributes of the browser session (SPEC §4.3).

export interface CookieNames { session: string; loginCsrf: string }

/** Under TLS or COOKIE_SECURE=1 the cookies are Secure with the __Host- prefix (no Domain, Path=/). */
export function cookieNames(secure: boolean): CookieNames {
  return secure ? { session: '__Host-sid', loginCsrf: '__Host-login_csrf' } : { session: 'sid', loginCsrf: 'login_csrf' };
}

/** Parses a Cookie header; the first value of a name wins. */
export function parseCookies(header: string): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

/** A Set-Cookie value: HttpOnly, SameSite=Strict, Path=/, plus Secure when asked; maxAgeS 0 deletes it. */
export function setCookie(name: string, value: string, secure: boolean, maxAgeS?: number): string {
  let c = `${name}=${value}; HttpOnly; SameSite=Strict; Path=/`;
  if (secure) c += '; Secure';
  if (maxAgeS !== undefined) c += `; Max-Age=${maxAgeS}`;
  return c;
}
