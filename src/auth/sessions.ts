import crypto from 'node:crypto';
import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import { newCsrfToken } from './csrf.js';
import { hashToken } from './device-tokens.js';
import type { Role, User } from './users.js';

export interface SessionTimeouts { idleMin: number; absoluteH: number }
export interface LiveSession { user: User; csrfToken: string; idHash: string }

/** A session id as issued: 32 random bytes, base64url. Anything else is no session at all. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** Stored form of a session id: the same SHA-256 hex as every other secret of the service. */
export const hashSessionId = (id: string): string => hashToken(id);

/**
 * Browser sessions. The raw id lives only in the client's cookie; the database holds its SHA-256, the
 * user, a per-session CSRF token and the timestamps for the idle and absolute timeouts. Every request
 * reads the database (no cache), so logout, disabling a user or a password change end a session at once.
 */
export class Sessions {
  private readonly idleMs: number;
  private readonly absoluteMs: number;

  constructor(private readonly pool: Pool, timeouts: SessionTimeouts, private readonly now: () => number = Date.now) {
    this.idleMs = timeouts.idleMin * 60_000;
    this.absoluteMs = timeouts.absoluteH * 3_600_000;
  }

  /** Starts a new session with a new id and CSRF token; returns the raw id for the cookie. */
  async create(userId: number): Promise<{ id: string; csrfToken: string }> {
    const now = this.now();
    // Expired rows are dropped here too, so the table does not grow with sessions nobody logged out of.
    await this.pool.query(q.purgeExpiredSessions, [new Date(now), new Date(now - this.idleMs)]);
    const id = crypto.randomBytes(32).toString('base64url');
    const csrfToken = newCsrfToken();
    await this.pool.query(q.insertSession, [hashSessionId(id), userId, csrfToken, new Date(now), new Date(now + this.absoluteMs)]);
    return { id, csrfToken };
  }

  /**
   * The live session for a cookie value, refreshing its last-seen time; null when there is none. A session
   * past its idle or absolute timeout (or of a disabled user) is deleted, and counts as logged out.
   */
  async authenticate(id: string | undefined): Promise<LiveSession | null> {
    if (!id || !SESSION_ID.test(id)) return null;
    const idHash = hashSessionId(id);
    const now = this.now();
    const res = await this.pool.query<{ id: number; email: string; role: Role; csrf_token: string }>(
      q.useSession, [idHash, new Date(now), new Date(now - this.idleMs)]);
    const row = res.rows[0];
    if (!row) {
      await this.pool.query(q.deleteSession, [idHash]);
      return null;
    }
    return { user: { id: row.id, email: row.email, role: row.role }, csrfToken: row.csrf_token, idHash };
  }

  /** Of these session id hashes, those still live, with their users; touches nothing (no last-seen refresh). */
  async stillLive(idHashes: readonly string[]): Promise<Map<string, User>> {
    const now = this.now();
    const res = await this.pool.query<User & { hash: string }>(q.liveSessions, [idHashes, new Date(now), new Date(now - this.idleMs)]);
    return new Map(res.rows.map((r) => [r.hash, { id: r.id, email: r.email, role: r.role }]));
  }

  /** Ends a session on the server (logout, or a new login replacing it). */
  async destroy(id: string): Promise<void> {
    if (SESSION_ID.test(id)) await this.pool.query(q.deleteSession, [hashSessionId(id)]);
  }
}
