// Composition root: load config, build modules, wire them, listen, and shut down gracefully.
import fs from 'node:fs';
import { DeviceTokenCache, listenForRevocations } from './auth/device-tokens.js';
import { bootstrapAdmin } from './auth/users.js';
import { ConfigError, loadConfig, type Config } from './config/load.js';
import { DeviceRateLimiter } from './http/admission.js';
import { registerIngestRoutes } from './http/ingest-routes.js';
import { registerOpsRoutes } from './http/ops-routes.js';
import { assertPortFree } from './http/port-guard.js';
import { LoginThrottle } from './auth/login-throttle.js';
import { MobileTokens } from './auth/mobile-tokens.js';
import { registerMobileRoutes } from './mobile/routes.js';
import { registerLiveRoute } from './live/hub.js';
import { LiveRelay } from './live/relay.js';
import { registerRuleRoutes } from './mobile/rule-routes.js';
import { registerWebhookRoutes } from './mobile/webhook-routes.js';
import { WebhookDispatcher } from './alerts/webhook-dispatcher.js';
import { Sessions } from './auth/sessions.js';
import { registerWebRoutes } from './web/routes.js';
import { createResponder } from './http/respond.js';
import { loadUws, UwsFallbackError, type us_listen_socket } from './http/uws.js';
import { Batcher } from './ingest/batcher.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createMetrics } from './observability/metrics.js';
import { createPool } from './store/db.js';
import { openEmbeddedDatabase } from './store/embedded.js';
import { migrate, migrationsApplied } from './store/migrate.js';
import { maintainTimeSeries } from './store/time-series-maintenance.js';
import { createIngestPool } from './workers/pool.js';
import { OfflineSweeper } from './liveness/sweeper.js';

export interface ServiceOptions {
  logger?: Logger;
  /** Injectable clock for tests. */
  now?: () => number;
}

export interface Service {
  port: number;
  databaseUrl: string;
  close(): Promise<void>;
  /** One offline sweep now (tests): devices marked offline, or null when another instance holds the sweeper lock. */
  sweepOnce?: () => Promise<number | null>;
  /** The webhook dispatcher (tests ask which instance leads). */
  webhooks?: WebhookDispatcher;
}

const MAINTENANCE_INTERVAL_MS = 3600_000;
const READINESS_TIMEOUT_MS = 2000;

export async function startService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const log = options.logger ?? createLogger(config.logLevel);
  const now = options.now ?? Date.now;
  const uws = loadUws();
  // Fail before starting anything (the embedded database above all) when the port is taken.
  await assertPortFree(config.host, config.port);

  const embedded = config.databaseUrl ? null : await openEmbeddedDatabase(config.dataDir, config.embeddedPgPort, (m) => log.info(m));
  const databaseUrl = config.databaseUrl ?? embedded!.url;
  const pool = createPool(databaseUrl);
  const mode = await migrate(pool, (m) => log.info(m));
  const maintenanceOptions = { retentionDays: config.retentionDays, compressAfterDays: config.compressAfterDays, partitionDaysAhead: config.partitionDaysAhead };
  await maintainTimeSeries(pool, mode, maintenanceOptions, now());
  const maintenance = setInterval(() => {
    maintainTimeSeries(pool, mode, maintenanceOptions, now()).catch((err) => log.error({ err }, 'time-series maintenance failed'));
  }, MAINTENANCE_INTERVAL_MS);
  maintenance.unref();

  const admin = await bootstrapAdmin(pool, config.adminEmail, config.adminPassword);
  if (admin?.generatedPassword) {
    // Printed once, on the console only: never through the logger.
    process.stdout.write(`\nCreated the first admin: ${admin.user.email} with password ${admin.generatedPassword}\nChange it after logging in.\n\n`);
  } else if (admin) {
    log.info({ email: admin.user.email }, 'created the first admin from ADMIN_EMAIL / ADMIN_PASSWORD');
  }

  const tokens = new DeviceTokenCache(pool, config.tokenCacheSize);
  const revocations = listenForRevocations(databaseUrl, tokens, (m) => log.warn(m));
  await revocations.ready;

  const tls = config.tlsKeyFile !== null;
  const app = tls ? uws.SSLApp({ key_file_name: config.tlsKeyFile!, cert_file_name: config.tlsCertFile! }) : uws.App();
  const respond = createResponder(tls);
  const mobileTokens = new MobileTokens(pool, config.mobileTokenTtlDays, now);
  const sessions = new Sessions(pool, { idleMin: config.sessionIdleMin, absoluteH: config.sessionAbsoluteH }, now);
  const liveHub = registerLiveRoute(app, { mobileTokens, sessions, log, tls, cookieSecure: config.cookieSecure, recheckMs: config.liveRecheckMs });
  const liveRelay = new LiveRelay(pool, databaseUrl, { subscribers: liveHub.subscribers, deliver: liveHub.deliverLocal }, log);
  liveHub.attachRelay(liveRelay);
  await liveRelay.ready;

  const workers = createIngestPool(databaseUrl, config.ingestWorkers);
  let batcher: Batcher | null = null;
  const metrics = createMetrics({ queueDepth: () => batcher?.queueDepth ?? 0 });
  batcher = new Batcher(
    { maxRows: config.batchMaxRows, maxWaitMs: config.batchMaxWaitMs, maxQueueRows: config.queueMaxRows, maxInFlight: workers.threads },
    (payload, transferList) => workers.run(payload, transferList),
    (stats) => {
      metrics.batchRows.observe(stats.rows);
      metrics.flushSeconds.observe(stats.latencyMs / 1000);
      if (stats.ok) {
        metrics.readings.inc(stats.readings);
        for (const change of stats.alertChanges ?? []) {
          if (change.type === 'alert_opened') metrics.alertsOpened.inc();
          liveHub.alertChanged(change);
        }
      } else {
        metrics.dbErrors.labels('batch').inc();
        log.error({ err: stats.error, rows: stats.rows, requests: stats.requests }, 'ingest batch failed; its requests were answered 503');
      }
    },
  );

  registerIngestRoutes(app, {
    tokens, batcher, respond, metrics, now,
    onCommitted: (device, seenAtMs, body) => liveHub.deviceSeen(device.id, device.ownerId, seenAtMs, body),
    rateLimiter: new DeviceRateLimiter(config.deviceRateLimit),
    limits: { maxBodyBytes: config.maxBodyBytes, maxReadingsPerRequest: config.maxReadingsPerRequest },
    onDatabaseError: (err) => { metrics.dbErrors.labels('token_lookup').inc(); log.error({ err }, 'device token look-up failed'); },
  });
  // One throttle for the mobile and the browser login: failures through either count together.
  const loginThrottle = new LoginThrottle(undefined, now);
  registerMobileRoutes(app, { pool, respond, log, now, trustProxy: config.trustProxy, tokens: mobileTokens, throttle: loginThrottle, live: liveHub });
  registerRuleRoutes(app, { pool, respond, log, trustProxy: config.trustProxy, tokens: mobileTokens });
  registerWebhookRoutes(app, { pool, respond, log, trustProxy: config.trustProxy, tokens: mobileTokens });
  registerWebRoutes(app, {
    pool, log, tls, cookieSecure: config.cookieSecure, throttle: loginThrottle, trustProxy: config.trustProxy,
    sessions, now, live: liveHub,
  });
  let stopping = false;
  registerOpsRoutes(app, {
    respond, metrics,
    readiness: async () => {
      const missing: string[] = [];
      if (stopping) missing.push('shutting down');
      if (workers.aliveThreads() < workers.threads) missing.push('workers');
      // A stalled database answers 503 within READINESS_TIMEOUT_MS, not never.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), READINESS_TIMEOUT_MS); });
      try {
        if (!(await Promise.race([migrationsApplied(pool), timeout]))) missing.push('migrations');
      } catch {
        missing.push('database');
      } finally {
        clearTimeout(timer);
      }
      return missing;
    },
  });

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(config.host, config.port, (socket) => (socket ? resolve(socket) : reject(new Error(`cannot listen on ${config.host}:${config.port}`))));
  });
  const port = uws.us_socket_local_port(listenSocket);
  log.info({ port, tls, storage: mode, workers: workers.threads, embedded: embedded !== null }, 'telemetry service listening');

  const sweeper = new OfflineSweeper(pool, {
    offlineAfterS: config.offlineAfterS, intervalMs: config.sweepIntervalMs, now, log,
    onError: () => metrics.dbErrors.labels('sweeper').inc(),
    onOffline: (devices, atMs) => { for (const d of devices) liveHub.deviceOffline(d.id, d.ownerId, atMs); },
  });
  sweeper.start();
  const webhooks = new WebhookDispatcher(databaseUrl, pool, {
    pollMs: config.webhookPollMs, retryBaseMs: config.webhookRetryBaseMs, retryMaxMs: config.webhookRetryMaxMs,
    giveUpH: config.webhookGiveUpH, timeoutMs: config.webhookTimeoutMs, log,
    onAttempt: (outcome) => metrics.webhookAttempts.labels(outcome).inc(),
    onError: () => metrics.dbErrors.labels('webhooks').inc(),
  });
  webhooks.start();

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      stopping = true;
      clearInterval(maintenance);
      await sweeper.stop();
      // Stop accepting connections, then commit and answer everything already accepted.
      uws.us_listen_socket_close(listenSocket);
      liveHub.close();
      await batcher!.drain();
      await workers.close();
      // After the drain: ingest stops at once, and the last batches' deliveries may still go out (or wait for the next leader).
      await webhooks.stop();
      await revocations.close();
      await liveRelay.close();
      await pool.end();
      if (embedded?.owned) await embedded.stop();
      log.info('telemetry service stopped');
    })();
    return closing;
  };
  return { port, databaseUrl, close, sweepOnce: () => sweeper.sweepOnce(), webhooks };
}

async function run(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) { process.stderr.write(`Configuration error: ${err.message}\n`); process.exit(2); }
    throw err;
  }
  const log = createLogger(config.logLevel);
  let service: Service;
  try {
    service = await startService(config, { logger: log });
  } catch (err) {
    if (err instanceof UwsFallbackError) { process.stderr.write(`${err.message}\n`); process.exit(3); }
    log.fatal({ err }, 'could not start');
    process.exit(1);
  }
  const stop = (signal: string) => {
    log.info({ signal }, 'stopping');
    // A drain that cannot finish (the database gone) must not keep the process alive forever.
    setTimeout(() => { log.error('graceful stop took longer than 30 s; exiting'); process.exit(1); }, 30_000).unref();
    service.close().then(() => process.exit(0), (err) => { log.error({ err }, 'unclean stop'); process.exit(1); });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(new URL(import.meta.url))) {
  void run();
}
