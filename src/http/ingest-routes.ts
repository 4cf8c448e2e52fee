import { bearerToken, hashToken, type DeviceIdentity, type DeviceTokenCache } from '../auth/device-tokens.js';
import { Errors, type ApiError } from '../errors.js';
import { TOKEN_REVOKED, type Batcher } from '../ingest/batcher.js';
import { EVENT_TYPES, moduleIndex } from '../ingest/modules.js';
import { normaliseBody, type NormalisedBody } from '../ingest/normalise.js';
import type { Metrics } from '../observability/metrics.js';
import type { DeviceRateLimiter } from './admission.js';
import { readBody } from './body-reader.js';
import type { Responder } from './respond.js';
import type { HttpResponse, TemplatedApp } from './uws.js';

export interface IngestRouteDeps {
  tokens: DeviceTokenCache;
  batcher: Batcher;
  rateLimiter: DeviceRateLimiter;
  respond: Responder;
  metrics: Metrics;
  limits: { maxBodyBytes: number; maxReadingsPerRequest: number };
  now: () => number;
  onDatabaseError: (err: Error) => void;
  /** After a request's batch committed: for live delivery. */
  onCommitted?: (device: DeviceIdentity, seenAtMs: number, body: NormalisedBody | null) => void;
}

type Route = 'telemetry' | 'heartbeat';
const TELEMETRY = EVENT_TYPES.indexOf('telemetry');
const HEARTBEAT = EVENT_TYPES.indexOf('heartbeat');

/** POST /api/telemetry-ingest and POST /api/webhooks/heartbeat: auth, body, validation, then the batcher. */
export function registerIngestRoutes(app: TemplatedApp, deps: IngestRouteDeps): void {
  const { respond, metrics } = deps;
  const counters = {
    telemetry: new Map<number, { inc(): void }>(),
    heartbeat: new Map<number, { inc(): void }>(),
  };
  const cacheHit = metrics.tokenCache.labels('hit');
  const cacheMiss = metrics.tokenCache.labels('miss');
  const count = (route: Route, status: number) => {
    let c = counters[route].get(status);
    if (!c) { c = metrics.ingestRequests.labels(route, String(status)); counters[route].set(status, c); }
    c.inc();
  };

  const handle = (route: Route) => (res: HttpResponse, req: { getHeader(name: string): string }) => {
    // uWS: the request object dies when this function returns, and onAborted must be set before any await.
    const authorization = req.getHeader('authorization');
    const contentLength = Number(req.getHeader('content-length') || 0);
    const state = { aborted: false };
    res.onAborted(() => { state.aborted = true; });

    const fail = (err: ApiError, close = false) => {
      count(route, err.status);
      if (!state.aborted) respond.error(res, err, close);
    };

    const token = bearerToken(authorization);
    if (token === null) return fail(Errors.invalidDeviceToken, true);
    const hash = hashToken(token);
    const cached = deps.tokens.peek(hash);
    (cached === undefined ? cacheMiss : cacheHit).inc();
    if (cached === null) return fail(Errors.invalidDeviceToken, true);
    if (contentLength > deps.limits.maxBodyBytes && cached) return fail(Errors.bodyTooLarge(deps.limits.maxBodyBytes), true);

    const bodyPromise = readBody(res, deps.limits.maxBodyBytes);
    const devicePromise = cached ? Promise.resolve(cached) : deps.tokens.lookup(hash);
    void Promise.all([devicePromise, bodyPromise]).then(([device, body]) => {
      if (state.aborted) return;
      if (!device) return fail(Errors.invalidDeviceToken, !body.ok);
      if (!body.ok) return fail(Errors.bodyTooLarge(deps.limits.maxBodyBytes), true);
      accept(route, device, hash, body.body, res, state, fail);
    }, (err: Error) => {
      deps.onDatabaseError(err);
      fail(Errors.databaseUnavailable, true);
    });
  };

  const accept = (route: Route, device: DeviceIdentity, tokenHash: string, raw: Buffer, res: HttpResponse, state: { aborted: boolean }, fail: (e: ApiError) => void) => {
    const nowMs = deps.now();
    const wait = deps.rateLimiter.check(device.id, nowMs);
    if (wait > 0) return fail(Errors.deviceRateLimited(wait));

    let body: NormalisedBody | null = null;
    if (route === 'telemetry') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString('utf8'));
      } catch (err) {
        return fail(Errors.invalidJson((err as Error).message));
      }
      const result = normaliseBody(parsed, nowMs, { maxReadings: deps.limits.maxReadingsPerRequest });
      if (!result.ok) return fail(result.error);
      body = result.body;
    }
    const inserted = body ? body.values.length : 0;
    const skipped = body ? body.skipped : 0;
    const admitted = deps.batcher.offer(device.id, moduleIndex(device.module), route === 'telemetry' ? TELEMETRY : HEARTBEAT, nowMs, body, tokenHash, (err) => {
      if (err) return fail(err === TOKEN_REVOKED ? Errors.invalidDeviceToken : Errors.databaseUnavailable);
      count(route, 200);
      deps.onCommitted?.(device, nowMs, body);
      if (state.aborted) return;
      const answer = route === 'telemetry'
        ? `{"ok":true,"status":"ok","inserted":${inserted},"skipped":${skipped},"device_id":${device.id}}`
        : `{"ok":true,"status":"ok","device_id":${device.id}}`;
      respond.send(res, 200, answer);
    });
    if (admitted !== 'accepted') fail(admitted === 'closed' ? Errors.shuttingDown : Errors.queueFull);
  };

  app.post('/api/telemetry-ingest', handle('telemetry'));
  app.post('/api/webhooks/heartbeat', handle('heartbeat'));
  for (const path of ['/api/telemetry-ingest', '/api/webhooks/heartbeat']) {
    app.any(path, (res) => respond.error(res, Errors.methodNotAllowed));
  }
}
