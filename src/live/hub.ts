import { isSameOrigin } from '../auth/csrf.js';
import type { MobileTokens } from '../auth/mobile-tokens.js';
import type { Sessions } from '../auth/sessions.js';
import type { User } from '../auth/users.js';
import type { AlertChange } from '../ingest/batcher.js';
import type { NormalisedBody } from '../ingest/normalise.js';
import type { LiveRelay } from './relay.js';
import type { Logger } from '../observability/logger.js';
import { cookieNames, parseCookies } from '../web/cookies.js';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket } from '../http/uws.js';

export interface LiveDeps {
  mobileTokens: MobileTokens;
  sessions: Sessions;
  log: Logger;
  tls: boolean;
  cookieSecure: boolean;
  /** How often every open socket's session or token is checked again (LIVE_RECHECK_MS). */
  recheckMs: number;
}

/** What a socket was opened with: re-checked every recheckMs, and ended at once on logout on this instance. */
interface Credential { kind: 'session' | 'token'; hash: string }
interface Client { user: User; credential: Credential }

// Topics: every device's messages go to its owner's topic and to the admins' topic; a client subscribes to
// the one its account may see, so it never receives another user's devices.
const ownerTopic = (ownerId: number) => `owner/${ownerId}`;
const ADMIN_TOPIC = 'admin';
/** Close code when a socket's login ended (4000-4999: application codes). */
const CREDENTIALS_ENDED = 4001;

export interface LiveHub {
  /** After an ingest or heartbeat committed: the device is online with these latest values. */
  deviceSeen(deviceId: number, ownerId: number, seenAtMs: number, body: NormalisedBody | null): void;
  deviceOffline(deviceId: number, ownerId: number, atMs: number): void;
  alertChanged(change: AlertChange): void;
  /** Closes the sockets opened with this session id hash or token hash (logout on this instance). */
  endCredential(hash: string): void;
  /** Closes a user's sockets (disabled, role changed): they reconnect with what they may now see, or not at all. */
  endUser(userId: number): void;
  /** Stops the re-check timer and closes every socket. */
  close(): void;
  /** Sends this instance's messages to the other instances' sockets too (src/live/relay.ts). */
  attachRelay(relay: LiveRelay): void;
  /** Open sockets on this instance. */
  subscribers(): number;
  /** Publishes another instance's message to this instance's sockets of that owner and its admins. */
  deliverLocal(ownerId: number, text: string): void;
}

/**
 * GET /api/live: a WebSocket (uWS) pushing device status, latest values and opened or resolved alerts of the
 * devices the client may see. Browsers authenticate with the session cookie (and a same-origin Origin);
 * the mobile app with `Authorization: Bearer <access token>`.
 */
export function registerLiveRoute(app: TemplatedApp, deps: LiveDeps): LiveHub {
  const secure = deps.tls || deps.cookieSecure;
  const sessionCookie = cookieNames(secure).session;
  const schemes = deps.tls ? ['https'] : deps.cookieSecure ? ['http', 'https'] : ['http'];

  const authenticate = async (authorization: string, cookie: string, origin: { origin: string; secFetchSite: string; host: string }): Promise<Client | null> => {
    if (authorization) {
      const auth = await deps.mobileTokens.authenticate(authorization);
      return auth ? { user: auth.user, credential: { kind: 'token', hash: auth.tokenHash } } : null;
    }
    if (!isSameOrigin(origin, schemes)) return null;
    const session = await deps.sessions.authenticate(parseCookies(cookie).get(sessionCookie));
    return session ? { user: session.user, credential: { kind: 'session', hash: session.idHash } } : null;
  };
  const sockets = new Set<WebSocket<Client>>();
  const end = (ws: WebSocket<Client>) => ws.end(CREDENTIALS_ENDED, 'Logged out, or the account changed: reconnect.');

  app.ws<Client>('/api/live', {
    idleTimeout: 120,
    maxBackpressure: 1024 * 1024,
    upgrade: (res: HttpResponse, req: HttpRequest, context) => {
      // Copy everything before the first await: the request object dies when this handler returns.
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const authorization = req.getHeader('authorization');
      const cookie = req.getHeader('cookie');
      const origin = { origin: req.getHeader('origin'), secFetchSite: req.getHeader('sec-fetch-site'), host: req.getHeader('host') };
      let aborted = false;
      res.onAborted(() => { aborted = true; });
      authenticate(authorization, cookie, origin).then((client) => {
        if (aborted) return;
        if (!client) { res.cork(() => res.writeStatus('401 Unauthorized').end('{"error":"Log in first: session cookie or Authorization: Bearer <access token>."}', true)); return; }
        // Not inside res.cork, against uWS's advice: with this build (20.30), an upgrade inside cork now and then
        // had the new socket closed (1006) right after its 101 (about 1 in 4 runs of test/web-alerts.test.ts;
        // none in 16 without the cork). uWS prints a one-time warning about the uncorked write instead.
        res.upgrade<Client>(client, key, protocol, extensions, context);
      }, (err: unknown) => {
        deps.log.error({ err }, 'live upgrade failed');
        if (!aborted) res.cork(() => res.writeStatus('503 Service Unavailable').end('', true));
      });
    },
    open: (ws) => {
      sockets.add(ws);
      if (sockets.size === 1) relay?.nudge();
      const { user } = ws.getUserData();
      ws.subscribe(user.role === 'admin' ? ADMIN_TOPIC : ownerTopic(user.id));
      ws.send(JSON.stringify({ type: 'hello', user: { id: user.id, email: user.email, role: user.role } }));
    },
    message: () => { /* the stream is one-way: client messages are ignored */ },
    close: (ws) => { sockets.delete(ws); },
  });

  // Every socket's credential is checked again, read-only and in one query per kind: a session that timed out, a
  // revoked token, a disabled user or a changed role ends the socket within recheckMs on every instance.
  let rechecking = false;
  const recheck = async () => {
    if (rechecking || sockets.size === 0) return;
    rechecking = true;
    try {
      const open = [...sockets];
      const hashes = (kind: Credential['kind']) => open.filter((ws) => ws.getUserData().credential.kind === kind).map((ws) => ws.getUserData().credential.hash);
      const sessionHashes = hashes('session');
      const tokenHashes = hashes('token');
      const [liveSessions, liveTokens] = await Promise.all([
        sessionHashes.length ? deps.sessions.stillLive(sessionHashes) : new Map<string, User>(),
        tokenHashes.length ? deps.mobileTokens.stillLive(tokenHashes) : new Map<string, User>(),
      ]);
      for (const ws of open) {
        if (!sockets.has(ws)) continue;
        const { user, credential } = ws.getUserData();
        const now = (credential.kind === 'session' ? liveSessions : liveTokens).get(credential.hash);
        if (!now || now.id !== user.id || now.role !== user.role) end(ws);
      }
    } catch (err) {
      deps.log.warn({ err }, 'live credential re-check failed; retrying at the next interval');
    } finally {
      rechecking = false;
    }
  };
  const timer = setInterval(() => void recheck(), deps.recheckMs);
  timer.unref();

  let relay: LiveRelay | null = null;
  const publishLocal = (ownerId: number, text: string) => {
    app.publish(ownerTopic(ownerId), text);
    app.publish(ADMIN_TOPIC, text);
  };
  const publish = (ownerId: number, message: () => string) => {
    const local = app.numSubscribers(ownerTopic(ownerId)) > 0 || app.numSubscribers(ADMIN_TOPIC) > 0;
    const remote = relay?.othersListening ?? false;
    // Nothing is serialised when nobody listens: ingest pays for live delivery only while someone watches.
    if (!local && !remote) return;
    const text = message();
    if (local) publishLocal(ownerId, text);
    if (remote) relay!.send(ownerId, text);
  };

  return {
    attachRelay(r) { relay = r; },
    subscribers: () => sockets.size,
    deliverLocal: publishLocal,
    endCredential(hash) {
      for (const ws of [...sockets]) if (ws.getUserData().credential.hash === hash) end(ws);
    },
    endUser(userId) {
      for (const ws of [...sockets]) if (ws.getUserData().user.id === userId) end(ws);
    },
    close() {
      clearInterval(timer);
      for (const ws of [...sockets]) ws.end(1001, 'Service stopping.');
    },
    deviceSeen(deviceId, ownerId, seenAtMs, body) {
      publish(ownerId, () => {
        const latest: Record<string, { value: number; unit: string | null; recorded_at: string }> = {};
        if (body) body.names.forEach((name, i) => {
          const prev = latest[name];
          if (!prev || Date.parse(prev.recorded_at) <= body.times[i]) {
            latest[name] = { value: body.values[i], unit: body.units[i], recorded_at: new Date(body.times[i]).toISOString() };
          }
        });
        return JSON.stringify({ type: 'device', device_id: deviceId, status: 'online', last_seen_at: new Date(seenAtMs).toISOString(), latest });
      });
    },
    deviceOffline(deviceId, ownerId, atMs) {
      publish(ownerId, () => JSON.stringify({ type: 'device', device_id: deviceId, status: 'offline', at: new Date(atMs).toISOString() }));
    },
    alertChanged(change) {
      const { owner_id: ownerId, ...alert } = change;
      publish(ownerId, () => JSON.stringify({ ...alert, type: change.type }));
    },
  };
}
