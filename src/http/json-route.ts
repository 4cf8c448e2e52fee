import { Errors } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { readBody } from './body-reader.js';
import type { Responder } from './respond.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

/** What a JSON route handler sees: everything copied out of uWS before the first await. */
export interface JsonRequest {
  params: string[];
  query: URLSearchParams;
  authorization: string;
  ip: string;
  /** Parsed JSON body of a POST; undefined when there is none or it is not JSON. */
  body: unknown;
}

export interface Reply { status: number; body: unknown; headers?: Record<string, string> }
export type JsonHandler = (req: JsonRequest) => Promise<Reply>;

const MAX_JSON_BODY_BYTES = 64 * 1024;
const UNAVAILABLE: Reply = {
  status: 503, body: { status: 'error', error: Errors.serviceUnavailable.message },
  headers: Errors.serviceUnavailable.headers as Record<string, string>,
};

/**
 * Registers a JSON route on uWS: copies what the handler needs synchronously, reads a small body for POST,
 * and answers the handler's reply. An unexpected failure (the database down) answers 503, never a 500.
 */
export function jsonRoute(app: TemplatedApp, respond: Responder, log: Logger, method: 'get' | 'post', pattern: string, paramCount: number, handler: JsonHandler): void {
  app[method](pattern, (res: HttpResponse, req: HttpRequest) => {
    const params = Array.from({ length: paramCount }, (_, i) => req.getParameter(i) ?? '');
    const query = new URLSearchParams(req.getQuery() ?? '');
    const authorization = req.getHeader('authorization');
    const ip = Buffer.from(res.getRemoteAddressAsText()).toString();
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    const answer = (reply: Reply) => {
      if (!aborted) respond.send(res, reply.status, JSON.stringify(reply.body), 'application/json', reply.headers);
    };
    const body = method === 'post' ? readBody(res, MAX_JSON_BODY_BYTES) : Promise.resolve(null);
    void body.then((b) => {
      if (b && !b.ok) return answer({ status: 413, body: { status: 'error', error: Errors.bodyTooLarge(MAX_JSON_BODY_BYTES).message } });
      let parsed: unknown;
      if (b?.ok && b.body.length > 0) {
        try { parsed = JSON.parse(b.body.toString('utf8')); } catch { parsed = undefined; }
      }
      return handler({ params, query, authorization, ip, body: parsed }).then(answer);
    }).catch((err: unknown) => {
      log.error({ err }, `${method.toUpperCase()} ${pattern} failed`);
      answer(UNAVAILABLE);
    });
  });
}
