import crypto from 'node:crypto';

/** A fresh CSRF token: 32 random bytes, base64url (43 characters). */
export function newCsrfToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/**
 * Constant-time equality of a submitted token and the expected one. Both sides are hashed first, so
 * timingSafeEqual always compares 32 bytes and neither the length nor the content leaks through timing.
 * An empty token never matches.
 */
export function tokensMatch(submitted: string | null | undefined, expected: string | null | undefined): boolean {
  if (!submitted || !expected) return false;
  const a = crypto.createHash('sha256').update(submitted).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export interface OriginHeaders {
  /** The Origin header, '' when absent. */
  origin: string;
  /** The Sec-Fetch-Site header, '' when absent. */
  secFetchSite: string;
  /** The Host header, '' when absent. */
  host: string;
}

/**
 * The Origin check of every POST. The service's own origin is scheme + Host header, with the schemes the
 * service can be reached by (https under TLS; http, plus https behind a TLS proxy when COOKIE_SECURE=1).
 * A present Origin must equal it exactly ("null" never does). A missing Origin is accepted only with
 * `Sec-Fetch-Site: same-origin`: every current browser sends one or the other on a form POST, so a request
 * with neither did not come from our own page.
 */
export function isSameOrigin(h: OriginHeaders, schemes: readonly string[]): boolean {
  const host = h.host.toLowerCase();
  if (h.origin) {
    const origin = h.origin.toLowerCase();
    return host !== '' && schemes.some((s) => origin === `${s}://${host}`);
  }
  return h.secFetchSite.toLowerCase() === 'same-origin';
}
