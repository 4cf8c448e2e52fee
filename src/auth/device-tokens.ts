import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import { listen, type Listener } from '../store/listener.js';

export interface DeviceIdentity { id: number; ownerId: number; module: string }

export const DEVICE_TOKEN = /^[0-9a-f]{64}$/;

export function generateToken(): string {
  return crypto.randomBytes(32).toString('hex');
}

/** SHA-256 hex: how every secret (device and mobile tokens, session ids) is stored and looked up. */
export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

/**
 * Reads `Bearer <64 hex>`; anything else is no token at all. The scheme is case-insensitive (RFC 7235);
 * the token is lower-case hex only, as issued.
 */
export function bearerToken(header: string): string | null {
  if (header.length !== 71 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== 'bearer') return null;
  const token = header.slice(7);
  return DEVICE_TOKEN.test(token) ? token : null;
}

const UNKNOWN = 0 as const;
// Negative entries stop a flood of wrong tokens from reaching the database; bounded, and short-lived so
// a token can never stay refused for long by mistake.
const NEGATIVE_TTL_MS = 30_000;
// Positive entries are dropped at once by LISTEN/NOTIFY; the TTL is only a backstop if a notice is missed.
const POSITIVE_TTL_MS = 5 * 60_000;

/**
 * SHA-256 of the presented token -> LRU cache (hash -> device) -> database on a miss.
 * Concurrent misses for one hash share a single query.
 */
export class DeviceTokenCache {
  private readonly known: LRUCache<string, DeviceIdentity>;
  private readonly unknown: LRUCache<string, typeof UNKNOWN>;
  private readonly pending = new Map<string, Promise<DeviceIdentity | null>>();

  constructor(private readonly pool: Pool, size: number) {
    this.known = new LRUCache({ max: size, ttl: POSITIVE_TTL_MS });
    this.unknown = new LRUCache({ max: Math.min(size, 50_000), ttl: NEGATIVE_TTL_MS });
  }

  /** Synchronous answer when cached: a device, null for a known-bad token, undefined when the database must say. */
  peek(hash: string): DeviceIdentity | null | undefined {
    const device = this.known.get(hash);
    if (device) return device;
    if (this.unknown.has(hash)) return null;
    return undefined;
  }

  lookup(hash: string): Promise<DeviceIdentity | null> {
    let p = this.pending.get(hash);
    if (p) return p;
    const query: Promise<DeviceIdentity | null> = this.pool.query<{ id: number; owner_id: number; module: string }>(q.findDeviceByTokenHash, [hash]).then((res) => {
      // Evicted while the query ran: its answer may predate the revocation, so it must not be cached.
      const current = this.pending.get(hash) === query;
      const row = res.rows[0];
      if (!row) { if (current) this.unknown.set(hash, UNKNOWN); return null; }
      const device = { id: row.id, ownerId: row.owner_id, module: row.module };
      if (current) this.known.set(hash, device);
      return device;
    }).finally(() => { if (this.pending.get(hash) === query) this.pending.delete(hash); });
    this.pending.set(hash, query);
    return query;
  }

  evict(hash: string): void {
    this.known.delete(hash);
    this.unknown.delete(hash);
    this.pending.delete(hash);
  }

  clear(): void {
    this.known.clear();
    this.unknown.clear();
    this.pending.clear();
  }
}

/**
 * Listens for revoked token hashes from every instance and the CLI. While the listener is disconnected
 * notices can be missed, so each (re)connect clears the whole cache.
 */
export function listenForRevocations(databaseUrl: string, cache: DeviceTokenCache, log: (msg: string) => void): Listener {
  return listen(databaseUrl, {
    name: 'telemetry-token-listener',
    channels: { [q.TOKEN_REVOKED_CHANNEL]: (hash) => { if (hash) cache.evict(hash); } },
    // Revocations sent while the connection was down were missed: forget every cached token.
    onConnect: () => cache.clear(),
    log,
  });
}
