// What every mobile route module shares: the reply envelope and bearer-token authentication.
import type { MobileTokens } from '../auth/mobile-tokens.js';
import type { User } from '../auth/users.js';
import { Errors, type ApiError } from '../errors.js';
import { jsonRoute, type JsonRequest, type Reply } from '../http/json-route.js';
import type { Responder } from '../http/respond.js';
import type { TemplatedApp } from '../http/uws.js';
import type { Logger } from '../observability/logger.js';
import type { Pool } from '../store/db.js';

export interface MobileApiDeps {
  pool: Pool;
  tokens: MobileTokens;
  respond: Responder;
  log: Logger;
  /** TRUST_PROXY=1: the client address comes from X-Forwarded-For. */
  trustProxy: boolean;
}

/** `{"status":"ok","data":...}` */
export const ok = (data: unknown, status = 200): Reply => ({ status, body: { status: 'ok', data } });
/** `{"status":"error","error":"<message>"}` with the error's status and headers. */
export const fail = (err: ApiError): Reply =>
  ({ status: err.status, body: { status: 'error', error: err.message }, headers: err.headers as Record<string, string> | undefined });

export type Method = 'get' | 'post' | 'put' | 'del';
export type AuthedHandler = (req: JsonRequest, user: User, tokenHash: string) => Promise<Reply>;

/** Registers JSON routes that need a live access token; without one they answer 401 INVALID_ACCESS_TOKEN. */
export function authedRoutes(app: TemplatedApp, deps: MobileApiDeps) {
  const unauthorized = fail(Errors.invalidAccessToken);
  return (method: Method, pattern: string, params: number, h: AuthedHandler) =>
    jsonRoute(app, deps.respond, deps.log, deps.trustProxy, method, pattern, params, async (req) => {
      const auth = await deps.tokens.authenticate(req.authorization);
      return auth ? h(req, auth.user, auth.tokenHash) : unauthorized;
    });
}
