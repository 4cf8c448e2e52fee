import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load.js';
import { VARIABLES, type IntSpec } from './schema.js';

const configError = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
};

describe('loadConfig defaults', () => {
  it('gives the documented defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080, host: '0.0.0.0', databaseUrl: null, dataDir: path.resolve('./data'), embeddedPgPort: 54320,
      batchMaxRows: 10_000, batchMaxWaitMs: 5, queueMaxRows: 200_000, maxBodyBytes: 1_048_576,
      maxReadingsPerRequest: 5000, deviceRateLimit: 0, tokenCacheSize: 100_000, offlineAfterS: 300,
      mobileTokenTtlDays: 30, sessionIdleMin: 30, sessionAbsoluteH: 12, cookieSecure: false,
      tlsKeyFile: null, tlsCertFile: null, retentionDays: 0, compressAfterDays: 7, partitionDaysAhead: 3,
      logLevel: 'info', adminEmail: null, adminPassword: null,
    });
    expect(c.ingestWorkers).toBe(Math.max(2, Math.min(8, 2 * os.availableParallelism())));
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('treats an empty string as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ port: 8080, databaseUrl: null });
  });

  it('reads set values and lets overrides win over the environment', () => {
    const c = loadConfig({ PORT: '9000', DATA_DIR: '/tmp/x', COOKIE_SECURE: 'yes', LOG_LEVEL: 'debug', DATABASE_URL: 'postgresql://u@h/db', INGEST_WORKERS: '8' }, { port: 0 });
    expect(c).toMatchObject({ port: 0, dataDir: '/tmp/x', cookieSecure: true, logLevel: 'debug', databaseUrl: 'postgresql://u@h/db', ingestWorkers: 8 });
  });
});

describe('loadConfig validation', () => {
  const ints = Object.entries(VARIABLES).filter((e): e is [string, IntSpec] => e[1].kind === 'int');

  // Companions that satisfy the cross-variable rule (QUEUE_MAX_ROWS >= MAX_READINGS_PER_REQUEST + 2) at every bound.
  const companions = (name: string) => {
    const { [name]: _tested, ...rest } = { QUEUE_MAX_ROWS: '100000000', MAX_READINGS_PER_REQUEST: '1' } as Record<string, string>;
    return rest;
  };

  it.each(ints)('%s accepts its bounds and names itself and its range just outside them', (name, spec) => {
    expect(() => loadConfig({ ...companions(name), [name]: String(spec.min) })).not.toThrow();
    expect(() => loadConfig({ ...companions(name), [name]: String(spec.max) })).not.toThrow();
    for (const bad of [spec.min - 1, spec.max + 1]) {
      const message = configError({ ...companions(name), [name]: String(bad) });
      expect(message).toContain(name);
      expect(message).toContain(`from ${spec.min} to ${spec.max}`);
      expect(message).toContain(String(bad));
    }
  });

  it.each(ints)('%s refuses a value that is not a whole number', (name, spec) => {
    for (const bad of ['abc', '1.5', '1e3', '0x10']) {
      const message = configError({ [name]: bad });
      expect(message).toContain(name);
      expect(message).toContain(`from ${spec.min} to ${spec.max}`);
    }
  });

  it('refuses a COOKIE_SECURE that is not a boolean word, and reads the accepted words', () => {
    expect(configError({ COOKIE_SECURE: 'maybe' })).toMatch(/^COOKIE_SECURE must be 1\/0, true\/false, yes\/no or on\/off/);
    for (const v of ['1', 'true', 'YES', 'on']) expect(loadConfig({ COOKIE_SECURE: v }).cookieSecure).toBe(true);
    for (const v of ['0', 'false', 'no', 'Off']) expect(loadConfig({ COOKIE_SECURE: v }).cookieSecure).toBe(false);
  });

  it('refuses an unknown LOG_LEVEL and lists the accepted ones', () => {
    expect(configError({ LOG_LEVEL: 'loud' })).toBe('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "loud".');
  });

  it('refuses a DATABASE_URL that is not a postgres URL', () => {
    expect(configError({ DATABASE_URL: 'mysql://u@h/db' })).toMatch(/^DATABASE_URL is not valid \(postgres:\/\/ URL/);
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).databaseUrl).toBe('postgres://u@h/db');
  });

  it('requires TLS_KEY_FILE and TLS_CERT_FILE together', () => {
    const pair = /TLS_KEY_FILE and TLS_CERT_FILE must be set together/;
    expect(configError({ TLS_KEY_FILE: '/k.pem' })).toMatch(pair);
    expect(configError({ TLS_CERT_FILE: '/c.pem' })).toMatch(pair);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pem-'));
    const key = path.join(dir, 'k.pem');
    const cert = path.join(dir, 'c.pem');
    fs.writeFileSync(key, '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n');
    fs.writeFileSync(cert, '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
    expect(loadConfig({ TLS_KEY_FILE: key, TLS_CERT_FILE: cert })).toMatchObject({ tlsKeyFile: key, tlsCertFile: cert });
    expect(loadConfig({})).toMatchObject({ tlsKeyFile: null, tlsCertFile: null });
    expect(configError({ TLS_KEY_FILE: '/nonexistent.pem', TLS_CERT_FILE: cert })).toMatch(/TLS_KEY_FILE must name a readable PEM file/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an ADMIN_PASSWORD outside 8 to 72 bytes, naming the variable', () => {
    expect(configError({ ADMIN_PASSWORD: 'short' })).toMatch(/ADMIN_PASSWORD must be 8 to 72 bytes; it has 5/);
    expect(configError({ ADMIN_PASSWORD: 'x'.repeat(73) })).toMatch(/ADMIN_PASSWORD must be 8 to 72 bytes/);
    expect(loadConfig({ ADMIN_PASSWORD: 'x'.repeat(72) }).adminPassword).toHaveLength(72);
  });

  it('refuses a queue smaller than the largest request it must accept', () => {
    expect(configError({ QUEUE_MAX_ROWS: '5002', MAX_READINGS_PER_REQUEST: '5001' })).toMatch(/QUEUE_MAX_ROWS must be at least MAX_READINGS_PER_REQUEST \+ 2 \(5003\)/);
    expect(loadConfig({ QUEUE_MAX_ROWS: '5003', MAX_READINGS_PER_REQUEST: '5001' }).queueMaxRows).toBe(5003);
  });

  it('refuses a first webhook retry delay longer than the longest one, and accepts them equal', () => {
    expect(configError({ WEBHOOK_RETRY_BASE_MS: '5001', WEBHOOK_RETRY_MAX_MS: '5000' })).toMatch(/WEBHOOK_RETRY_BASE_MS \(5001\) must not exceed WEBHOOK_RETRY_MAX_MS \(5000\)/);
    expect(loadConfig({ WEBHOOK_RETRY_BASE_MS: '5000', WEBHOOK_RETRY_MAX_MS: '5000' }).webhookRetryMaxMs).toBe(5000);
  });

  it('masks the password of an invalid DATABASE_URL in its message', () => {
    const message = configError({ DATABASE_URL: 'mysql://u:s3cret@h/db' });
    expect(message).toContain('DATABASE_URL');
    expect(message).not.toContain('s3cret');
  });
});
