import { acknowledgeAlert, alertActor, resolveAlert } from '../alerts/lifecycle.js';
import type { LiveHub } from '../live/hub.js';
import type { LoginThrottle } from '../auth/login-throttle.js';
import { checkCredentials } from '../auth/credentials.js';
import { Errors } from '../errors.js';
import type { User } from '../auth/users.js';
import * as q from '../store/queries.js';
import { jsonRoute, type JsonRequest, type Reply } from '../http/json-route.js';
import { parseId } from '../http/params.js';
import { authedRoutes, fail, ok, type MobileApiDeps } from './api.js';
import type { TemplatedApp } from '../http/uws.js';

export interface MobileDeps extends MobileApiDeps {
  throttle: LoginThrottle;
  now: () => number;
  /** Ends the live sockets of a token at logout; pushes alerts resolved by hand. */
  live?: Pick<LiveHub, 'endCredential' | 'alertChanged'>;
}

const badQuery = (message: string) => fail(Errors.badQuery(message));
// Another user's device or alert is indistinguishable from one that does not exist.
const NOT_FOUND = fail(Errors.resourceNotFound);
const DAY_MS = 86_400_000;
const MAX_POINTS = 5000;

// Epoch seconds stay below 1e11 until the year 5138, epoch milliseconds pass it in 1973 (as for ingestion).
const EPOCH_MS_THRESHOLD = 1e11;
const MAX_TIME_MS = 8.64e15; // the largest time a Date can hold
// A date, or a date and time with Z or an offset: a time without one would be read in the server's zone.
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

/** Epoch ms of an ISO 8601 time or epoch seconds/milliseconds; the fallback when absent; null when invalid. */
function parseTime(s: string | null, fallback: number): number | null {
  if (s === null || s === '') return fallback;
  let ms: number;
  if (/^\d{1,16}$/.test(s)) {
    const n = Number(s);
    ms = n < EPOCH_MS_THRESHOLD ? n * 1000 : n;
  } else {
    // An unencoded "+" in a query string arrives as a space: read "10:00:00 02:00" as "+02:00".
    const iso = s.replace(/ (\d{2}:?\d{2})$/, '+$1');
    const m = ISO_TIME.exec(iso);
    // Date.parse would roll 2026-02-31 over to March: refuse days the month does not have.
    if (!m || Number(m[3]) > new Date(Date.UTC(Number(m[1]), Number(m[2]), 0)).getUTCDate()) return null;
    ms = Date.parse(iso);
  }
  return Number.isFinite(ms) && ms <= MAX_TIME_MS ? ms : null;
}

/** Bucket width in seconds: "300", "300s", "5m", "1h", "1d"; default about 200 points over the range. */
function parseBucketS(s: string | null, rangeMs: number): number | null {
  if (s === null || s === '') return Math.max(1, Math.ceil(rangeMs / 1000 / 200));
  const m = /^(\d{1,7})([smhd]?)$/.exec(s);
  if (!m) return null;
  const n = Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
  return n >= 1 ? n : null;
}

/** POST /api/mobile/login, /logout and the device, telemetry, GPS and alert reads of SPEC §4.2. */
export function registerMobileRoutes(app: TemplatedApp, deps: MobileDeps): void {
  const { pool, tokens, throttle } = deps;
  const route = (method: 'get' | 'post', pattern: string, params: number, h: (req: JsonRequest) => Promise<Reply>) =>
    jsonRoute(app, deps.respond, deps.log, deps.trustProxy, method, pattern, params, h);
  const authed = authedRoutes(app, deps);
  const visibleDevice = async (user: User, idText: string) => {
    const id = parseId(idText);
    if (id === null) return null;
    const res = await pool.query(q.listVisibleDevices, [user.id, user.role === 'admin', id]);
    return res.rows[0] ?? null;
  };

  route('post', '/api/mobile/login', 0, async (req) => {
    const b = (req.body ?? {}) as { email?: unknown; password?: unknown };
    const email = typeof b.email === 'string' ? b.email.trim() : '';
    if (!email || typeof b.password !== 'string' || !b.password) return fail(Errors.credentialsRequired);
    const wait = throttle.retryAfterS(email, req.ip);
    if (wait > 0) return fail(Errors.loginThrottled(wait));
    const attempt = throttle.begin(email, req.ip);
    const user = await checkCredentials(pool, email, b.password);
    if (!user) return fail(Errors.invalidCredentials);
    attempt.succeeded();
    const token = await tokens.issue(user.id);
    return ok({ token, user: { id: user.id, email: user.email, role: user.role } });
  });

  authed('post', '/api/mobile/logout', 0, async (_req, _user, tokenHash) => {
    await tokens.revoke(tokenHash);
    deps.live?.endCredential(tokenHash);
    return { status: 200, body: { status: 'ok' } };
  });

  authed('get', '/api/mobile/devices', 0, async (_req, user) => {
    const res = await pool.query(q.listVisibleDevices, [user.id, user.role === 'admin', null]);
    return ok({ devices: res.rows });
  });

  authed('get', '/api/mobile/devices/:id', 1, async (req, user) => {
    const device = await visibleDevice(user, req.params[0]);
    if (!device) return NOT_FOUND;
    const open = await pool.query<{ n: number }>(q.countUnresolvedAlerts, [device.id]);
    return ok({ device: { ...device, open_alerts: open.rows[0].n } });
  });

  authed('get', '/api/mobile/devices/:id/telemetry', 1, async (req, user) => {
    const device = await visibleDevice(user, req.params[0]);
    if (!device) return NOT_FOUND;
    const metric = req.query.get('metric');
    if (!metric) return badQuery('metric is required, e.g. ?metric=heart_rate&from=2026-01-01T00:00:00Z&to=...&bucket=5m.');
    const to = parseTime(req.query.get('to'), deps.now());
    const from = to === null ? null : parseTime(req.query.get('from'), to - DAY_MS);
    if (from === null || to === null || from >= to) return badQuery('from and to must be ISO 8601 times or epoch seconds/milliseconds, with from before to.');
    const bucketS = parseBucketS(req.query.get('bucket'), to - from);
    if (bucketS === null) return badQuery('bucket must be seconds, or a number with s, m, h or d, e.g. 5m.');
    if ((to - from) / 1000 / bucketS > MAX_POINTS) return badQuery(`That range and bucket give more than ${MAX_POINTS} points; choose a larger bucket.`);
    const res = await pool.query(q.telemetryBuckets, [device.id, metric, new Date(from), new Date(to), bucketS]);
    return ok({ metric, bucket_s: bucketS, from: new Date(from), to: new Date(to), points: res.rows });
  });

  authed('get', '/api/mobile/devices/:id/gps', 1, async (req, user) => {
    const device = await visibleDevice(user, req.params[0]);
    if (!device) return NOT_FOUND;
    const to = parseTime(req.query.get('to'), deps.now());
    const from = to === null ? null : parseTime(req.query.get('from'), to - DAY_MS);
    if (from === null || to === null || from >= to) return badQuery('from and to must be ISO 8601 times or epoch seconds/milliseconds, with from before to.');
    const res = await pool.query(q.gpsTrack, [device.id, new Date(from), new Date(to)]);
    return ok({ points: res.rows.map((r) => ({ t: r.time, lat: r.lat, lng: r.lng, altitude_m: r.altitude_m, speed_kmh: r.speed_kmh, heading_deg: r.heading_deg, accuracy_m: r.accuracy_m })) });
  });

  authed('get', '/api/mobile/alerts', 0, async (req, user) => {
    const status = req.query.get('status');
    if (status !== null && !['open', 'acknowledged', 'resolved'].includes(status)) return badQuery('status must be open, acknowledged or resolved.');
    const res = await pool.query(q.listVisibleAlerts, [user.id, user.role === 'admin', status]);
    return ok({ alerts: res.rows });
  });

  authed('post', '/api/mobile/alerts/:id/acknowledge', 1, async (req, user) => {
    const id = parseId(req.params[0]);
    if (id === null) return NOT_FOUND;
    const r = await acknowledgeAlert(pool, alertActor(user), id, deps.now());
    if (r.ok) return ok({ alert: r.alert });
    // Not acknowledged: someone else's (404), or no longer open (409, with its status).
    return r.kind === 'not_found' ? NOT_FOUND : fail(Errors.alertNotOpen(r.status));
  });

  authed('post', '/api/mobile/alerts/:id/resolve', 1, async (req, user) => {
    const id = parseId(req.params[0]);
    if (id === null) return NOT_FOUND;
    const { result, change } = await resolveAlert(pool, alertActor(user), id, deps.now());
    if (change) deps.live?.alertChanged(change);
    if (result.ok) return ok({ alert: result.alert });
    return result.kind === 'not_found' ? NOT_FOUND : fail(Errors.alertResolved);
  });
}
