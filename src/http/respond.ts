import type { ApiError } from '../errors.js';
import type { HttpResponse } from './uws.js';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 204: '204 No Content', 302: '302 Found', 400: '400 Bad Request',
  401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed',
  413: '413 Payload Too Large', 415: '415 Unsupported Media Type', 429: '429 Too Many Requests',
  500: '500 Internal Server Error', 503: '503 Service Unavailable',
};

const CSP = "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** The headers of SPEC §4 that every response carries, errors included. */
export function securityHeaders(tls: boolean): [string, string][] {
  const headers: [string, string][] = [
    ['X-Frame-Options', 'DENY'],
    ['X-Content-Type-Options', 'nosniff'],
    ['Referrer-Policy', 'strict-origin-when-cross-origin'],
    ['Content-Security-Policy', CSP],
    ['Cache-Control', 'no-store'],
  ];
  if (tls) headers.push(['Strict-Transport-Security', 'max-age=31536000; includeSubDomains']);
  return headers;
}

export interface Responder {
  /** Writes a whole response; `close` ends the connection too (used when a request body was left unread). */
  send(res: HttpResponse, status: number, body: string, contentType?: string, headers?: Readonly<Record<string, string>>, close?: boolean): void;
  error(res: HttpResponse, err: ApiError, close?: boolean): void;
}

export function createResponder(tls: boolean): Responder {
  const common = securityHeaders(tls);
  const send: Responder['send'] = (res, status, body, contentType = 'application/json', headers, close = false) => {
    res.cork(() => {
      res.writeStatus(STATUS_TEXT[status] ?? String(status));
      for (let i = 0; i < common.length; i++) res.writeHeader(common[i][0], common[i][1]);
      res.writeHeader('Content-Type', contentType);
      if (headers) for (const k in headers) res.writeHeader(k, headers[k]);
      res.end(body, close);
    });
  };
  return {
    send,
    error: (res, err, close = false) => send(res, err.status, JSON.stringify({ error: err.message }), 'application/json', err.headers, close),
  };
}
