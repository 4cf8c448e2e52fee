import { securityHeaders } from '../http/respond.js';
import type { HttpResponse } from '../http/uws.js';

/** What a web handler answers: a page, a redirect, or a static asset, with any Set-Cookie values. */
export interface WebReply {
  status: number;
  body?: string | Buffer;
  contentType?: string;
  /** 303 target. */
  location?: string;
  setCookies?: string[];
  headers?: Record<string, string>;
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 303: '303 See Other', 400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden',
  404: '404 Not Found', 405: '405 Method Not Allowed', 409: '409 Conflict', 413: '413 Payload Too Large', 429: '429 Too Many Requests',
  503: '503 Service Unavailable',
};

/**
 * Writes web replies with the same security headers as every other response (src/http/respond.ts), and
 * several Set-Cookie lines, which the JSON responder's header record cannot carry. A reply's own
 * Cache-Control (a static asset's) replaces the default no-store.
 */
export function createHtmlWriter(tls: boolean): (res: HttpResponse, reply: WebReply) => void {
  const common = securityHeaders(tls);
  return (res, reply) => {
    res.cork(() => {
      res.writeStatus(STATUS_TEXT[reply.status] ?? String(reply.status));
      const own = reply.headers ?? {};
      for (const [k, v] of common) if (!(k === 'Cache-Control' && own['Cache-Control'])) res.writeHeader(k, v);
      res.writeHeader('Content-Type', reply.contentType ?? 'text/html; charset=utf-8');
      if (reply.location) res.writeHeader('Location', reply.location);
      for (const c of reply.setCookies ?? []) res.writeHeader('Set-Cookie', c);
      for (const k in own) res.writeHeader(k, own[k]);
      res.end(reply.body ?? '');
    });
  };
}
