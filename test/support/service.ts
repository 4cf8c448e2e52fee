// Starts the real, built service (dist/, as `npm test` builds first) on a loopback port against a fresh
// database, and gives tests a pool to assert on what is stored.
import pg from 'pg';
import { loadConfig, type Config } from '../../dist/src/config/load.js';
import { startService, type Service } from '../../dist/src/main.js';
import { createDevice } from '../../dist/src/auth/device-registry.js';
import { createUser } from '../../dist/src/auth/users.js';
import { createTestDatabase } from './database.js';

export interface TestReply { status: number; headers: Headers; json: any; text: string }

export interface TestService {
  baseUrl: string;
  service: Service;
  db: pg.Pool;
  databaseUrl: string;
  /** A user (bcrypt cost 12, so create few) and a device of theirs; returns the device token. */
  newDevice(module?: string, ownerEmail?: string): Promise<{ id: number; token: string; ownerId: number }>;
  post(path: string, body: unknown, token?: string, headers?: Record<string, string>): Promise<TestReply>;
  get(path: string, token?: string): Promise<TestReply>;
  close(): Promise<void>;
}

export async function startTestService(overrides: Partial<Config> = {}, options: { now?: () => number; databaseUrl?: string } = {}): Promise<TestService> {
  const owned = options.databaseUrl ? null : await createTestDatabase();
  const databaseUrl = options.databaseUrl ?? owned!.url;
  const config = loadConfig({}, {
    port: 0, host: '127.0.0.1', databaseUrl, logLevel: 'silent', ingestWorkers: 2,
    adminEmail: 'admin@test.local', adminPassword: 'test-admin-password', ...overrides,
  });
  const service = await startService(config, { now: options.now });
  const db = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  // DROP DATABASE ... WITH (FORCE) ends idle clients, and a killed connection must not fail the run.
  db.on('error', () => {});
  const baseUrl = `http://127.0.0.1:${service.port}`;
  const owners = new Map<string, number>();
  let userSeq = 0;

  const request = async (path: string, init: RequestInit): Promise<TestReply> => {
    const res = await fetch(baseUrl + path, init);
    const text = await res.text();
    let json: unknown = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    return { status: res.status, headers: res.headers, json, text };
  };

  const t: TestService = {
    baseUrl, service, db, databaseUrl,
    async newDevice(module = 'health', ownerEmail) {
      const email = ownerEmail ?? `owner${++userSeq}-${Date.now()}@example.com`;
      let ownerId = owners.get(email);
      if (ownerId === undefined) {
        ownerId = (await createUser(db, email, 'correct horse battery', 'user')).id;
        owners.set(email, ownerId);
      }
      const d = await createDevice(db, ownerId, `dev-${Date.now()}`, module);
      return { id: d.id, token: d.token, ownerId };
    },
    post: (path, body, token, headers = {}) => request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
    get: (path, token) => request(path, { headers: token ? { Authorization: `Bearer ${token}` } : {} }),
    async close() {
      await service.close();
      await db.end();
      if (owned) await owned.drop();
    },
  };
  return t;
}
