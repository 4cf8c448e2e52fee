import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import { bearerToken, generateToken, hashToken } from './device-tokens.js';
import type { User } from './users.js';

const DAY_MS = 86_400_000;

/**
 * Mobile access tokens: 32 random bytes shown once, stored as SHA-256 with an expiry. Every request checks
 * the database (no cache), so logout, disabling a user or a password change take effect at once everywhere.
 */
export class MobileTokens {
  constructor(private readonly pool: Pool, private readonly ttlDays: number, private readonly now: () => number = Date.now) {}

  async issue(userId: number): Promise<string> {
    const token = generateToken();
    await this.pool.query(q.insertAccessToken, [userId, hashToken(token), new Date(this.now() + this.ttlDays * DAY_MS)]);
    return token;
  }

  /** The user of a live token from `Authorization: Bearer <64 hex>`, or null. Tokens in URLs are never read. */
  async authenticate(authorization: string): Promise<{ user: User; tokenHash: string } | null> {
    // Same form as a device token: 64 lower-case hex after a case-insensitive `Bearer `.
    const token = bearerToken(authorization);
    if (token === null) return null;
    const tokenHash = hashToken(token);
    const res = await this.pool.query<User>(q.useAccessToken, [tokenHash, new Date(this.now())]);
    return res.rows[0] ? { user: res.rows[0], tokenHash } : null;
  }

  /** Of these token hashes, those still live, with their users; touches nothing (no last-used refresh). */
  async stillLive(tokenHashes: readonly string[]): Promise<Map<string, User>> {
    const res = await this.pool.query<User & { hash: string }>(q.liveAccessTokens, [tokenHashes, new Date(this.now())]);
    return new Map(res.rows.map((r) => [r.hash, { id: r.id, email: r.email, role: r.role }]));
  }

  async revoke(tokenHash: string): Promise<void> {
    await this.pool.query(q.revokeAccessToken, [tokenHash, new Date(this.now())]);
  }
}
