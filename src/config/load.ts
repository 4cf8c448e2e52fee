import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_BYTES } from '../auth/passwords.js';
import { VARIABLES, type VariableName, type VariableSpec } from './schema.js';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly embeddedPgPort: number;
  readonly ingestWorkers: number;
  readonly batchMaxRows: number;
  readonly batchMaxWaitMs: number;
  readonly queueMaxRows: number;
  readonly maxBodyBytes: number;
  readonly maxReadingsPerRequest: number;
  readonly deviceRateLimit: number;
  readonly tokenCacheSize: number;
  readonly offlineAfterS: number;
  readonly sweepIntervalMs: number;
  readonly webhookPollMs: number;
  readonly webhookRetryBaseMs: number;
  readonly webhookRetryMaxMs: number;
  readonly webhookGiveUpH: number;
  readonly webhookTimeoutMs: number;
  readonly liveRecheckMs: number;
  readonly mobileTokenTtlDays: number;
  readonly sessionIdleMin: number;
  readonly sessionAbsoluteH: number;
  readonly cookieSecure: boolean;
  readonly trustProxy: boolean;
  readonly tlsKeyFile: string | null;
  readonly tlsCertFile: string | null;
  readonly retentionDays: number;
  readonly compressAfterDays: number;
  readonly partitionDaysAhead: number;
  readonly logLevel: string;
  readonly adminEmail: string | null;
  readonly adminPassword: string | null;
}

export class ConfigError extends Error {}

function readable(file: string): string {
  try { return fs.readFileSync(file, 'utf8'); } catch { return ''; }
}

type Raw = Record<string, string | undefined>;

function parseOne(name: string, spec: VariableSpec, raw: string | undefined): unknown {
  if (raw === undefined || raw === '') return spec.default;
  switch (spec.kind) {
    case 'int': {
      if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number from ${spec.min} to ${spec.max} (${spec.help}); got "${raw}".`);
      const n = Number(raw);
      if (n < spec.min || n > spec.max) throw new ConfigError(`${name} must be from ${spec.min} to ${spec.max} (${spec.help}); got ${n}.`);
      return n;
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(v)) return true;
      if (['0', 'false', 'no', 'off'].includes(v)) return false;
      throw new ConfigError(`${name} must be 1/0, true/false, yes/no or on/off (${spec.help}); got "${raw}".`);
    }
    case 'enum':
      if (!spec.values.includes(raw)) throw new ConfigError(`${name} must be one of ${spec.values.join(', ')}; got "${raw}".`);
      return raw;
    case 'string':
      // Never echo a password: a URL's credentials are masked in the message.
      if (spec.pattern && !spec.pattern.test(raw)) throw new ConfigError(`${name} is not valid (${spec.help}); got "${raw.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@')}".`);
      return raw;
  }
}

/** Reads and validates the environment once; a bad value throws a ConfigError naming the variable and its range. */
export function loadConfig(env: Raw = process.env, overrides: Partial<Config> = {}): Config {
  const v = {} as Record<VariableName, unknown>;
  for (const [name, spec] of Object.entries(VARIABLES) as [VariableName, VariableSpec][]) {
    v[name] = parseOne(name, spec, env[name]);
  }
  if ((v.TLS_KEY_FILE === null) !== (v.TLS_CERT_FILE === null)) {
    throw new ConfigError('TLS_KEY_FILE and TLS_CERT_FILE must be set together (or neither).');
  }
  for (const name of ['TLS_KEY_FILE', 'TLS_CERT_FILE'] as const) {
    const file = v[name] as string | null;
    if (file !== null && !/-----BEGIN [A-Z ]+-----/.test(readable(file))) {
      throw new ConfigError(`${name} must name a readable PEM file; "${file}" is not one.`);
    }
  }
  const adminPassword = v.ADMIN_PASSWORD as string | null;
  if (adminPassword !== null) {
    const bytes = Buffer.byteLength(adminPassword, 'utf8');
    if (bytes < PASSWORD_MIN_BYTES || bytes > PASSWORD_MAX_BYTES) {
      throw new ConfigError(`ADMIN_PASSWORD must be ${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes; it has ${bytes}.`);
    }
  }
  // The largest request is its readings, a GPS fix and its module event: it must fit in an empty queue.
  if ((v.QUEUE_MAX_ROWS as number) < (v.MAX_READINGS_PER_REQUEST as number) + 2) {
    throw new ConfigError(`QUEUE_MAX_ROWS must be at least MAX_READINGS_PER_REQUEST + 2 (${(v.MAX_READINGS_PER_REQUEST as number) + 2}), or the largest request could never be accepted.`);
  }
  if ((v.WEBHOOK_RETRY_BASE_MS as number) > (v.WEBHOOK_RETRY_MAX_MS as number)) {
    throw new ConfigError(`WEBHOOK_RETRY_BASE_MS (${v.WEBHOOK_RETRY_BASE_MS}) must not exceed WEBHOOK_RETRY_MAX_MS (${v.WEBHOOK_RETRY_MAX_MS}).`);
  }
  const config: Config = {
    port: v.PORT as number,
    host: v.HOST as string,
    databaseUrl: v.DATABASE_URL as string | null,
    dataDir: path.resolve(v.DATA_DIR as string),
    embeddedPgPort: v.EMBEDDED_PG_PORT as number,
    // Workers mostly wait on PostgreSQL, so two per core keep it busy (measured: 4 beat 2 on 2 cores, bench/README.md).
    ingestWorkers: (v.INGEST_WORKERS as number | null) ?? Math.max(2, Math.min(8, 2 * os.availableParallelism())),
    batchMaxRows: v.BATCH_MAX_ROWS as number,
    batchMaxWaitMs: v.BATCH_MAX_WAIT_MS as number,
    queueMaxRows: v.QUEUE_MAX_ROWS as number,
    maxBodyBytes: v.MAX_BODY_BYTES as number,
    maxReadingsPerRequest: v.MAX_READINGS_PER_REQUEST as number,
    deviceRateLimit: v.DEVICE_RATE_LIMIT as number,
    tokenCacheSize: v.TOKEN_CACHE_SIZE as number,
    offlineAfterS: v.OFFLINE_AFTER_S as number,
    sweepIntervalMs: v.SWEEP_INTERVAL_MS as number,
    webhookPollMs: v.WEBHOOK_POLL_MS as number,
    webhookRetryBaseMs: v.WEBHOOK_RETRY_BASE_MS as number,
    webhookRetryMaxMs: v.WEBHOOK_RETRY_MAX_MS as number,
    webhookGiveUpH: v.WEBHOOK_GIVE_UP_H as number,
    webhookTimeoutMs: v.WEBHOOK_TIMEOUT_MS as number,
    liveRecheckMs: v.LIVE_RECHECK_MS as number,
    mobileTokenTtlDays: v.MOBILE_TOKEN_TTL_DAYS as number,
    sessionIdleMin: v.SESSION_IDLE_MIN as number,
    sessionAbsoluteH: v.SESSION_ABSOLUTE_H as number,
    cookieSecure: v.COOKIE_SECURE as boolean,
    trustProxy: v.TRUST_PROXY as boolean,
    tlsKeyFile: v.TLS_KEY_FILE as string | null,
    tlsCertFile: v.TLS_CERT_FILE as string | null,
    retentionDays: v.RETENTION_DAYS as number,
    compressAfterDays: v.COMPRESS_AFTER_DAYS as number,
    partitionDaysAhead: v.PARTITION_DAYS_AHEAD as number,
    logLevel: v.LOG_LEVEL as string,
    adminEmail: v.ADMIN_EMAIL as string | null,
    adminPassword: v.ADMIN_PASSWORD as string | null,
    ...overrides,
  };
  return Object.freeze(config);
}
