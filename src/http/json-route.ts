import { Errors } from '../errors.js';
import { SqlState, sqlState } from '../store/db.js';
import type { Logger } from '../observability/logger.js';
import { readBody } from './body-reader.js';
import { clientIp } from './client-ip.js';
import type { Responder } from './respond.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

/** What a JSON route handler sees: everything copied out of uWS before the first await. */
export interface JsonRequest {
  params: string[];
  query: URLSearchParams;
  authorization: string;
  ip: string;
  /** Parsed JSON body of a POST or PUT; undefined when there is none or it is not JSON. */
  body: unknown;
}

export interface Reply { status: number; body: unknown; headers?: Record<string, string> }
export type JsonHandler = (req: JsonRequest) => Promise<Reply>;

const MAX_JSON_BODY_BYTES = 64 * 1024;
const BAD_TEXT = new Set<string>([SqlState.untranslatableCharacter, SqlState.characterNotInRepertoire]);
const UNAVAILABLE: Reply = {
  status: 503, body: { status: 'error', error: Errors.serviceUnavailable.message },
  headers: Errors.serviceUnavailable.headers as Record<string, string>,
};

/**
 * Registers a JSON route on uWS: copies what the handler needs synchronously, reads a small body for POST,
 * and answers the handler's reply. An unexpected failure (the database down) answers 503, never a 500.
 */
export function jsonRoute(app: TemplatedApp, respond: Responder, log: Logger, trustProxy: boolean, method: 'get' | 'post' | 'put' | 'del', pattern: string, paramCount: number, handler: JsonHandler): void {
  app[method](pattern, (res: HttpResponse, req: HttpRequest) => {
    const params = Array.from({ length: paramCount }, (_, i) => req.getParameter(i) ?? '');
    const query = new URLSearchParams(req.getQuery() ?? '');
    const authorization = req.getHeader('authorization');
    const ip = clientIp(res, req, trustProxy);
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    const answer = (reply: Reply) => {
      if (!aborted) respond.send(res, reply.status, JSON.stringify(reply.body), 'application/json', reply.headers);
    };
    const body = method === 'post' || method === 'put' ? readBody(res, MAX_JSON_BODY_BYTES) : Promise.resolve(null);
    void body.then((b) => {
      if (b && !b.ok) return answer({ status: 413, body: { status: 'error', error: Errors.requestTooLarge(MAX_JSON_BODY_BYTES).message } });
      let parsed: unknown;
      if (b?.ok && b.body.length > 0) {
        try { parsed = JSON.parse(b.body.toString('utf8')); } catch { parsed = undefined; }
      }
      return handler({ params, query, authorization, ip, body: parsed }).then(answer);
    }).catch((err: unknown) => {
      // Input PostgreSQL cannot represent (a NUL byte, invalid UTF-8) is the client's error, not ours.
      if (BAD_TEXT.has(sqlState(err) ?? '')) return answer({ status: 400, body: { status: 'error', error: Errors.badText.message } });
      log.error({ err }, `${method.toUpperCase()} ${pattern} failed`);
      answer(UNAVAILABLE);
    });
  });
}
