import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import { PASSWORD_MAX_BYTES, verifyPassword } from './passwords.js';
import type { Role, User } from './users.js';

// A real cost-12 hash of 32 random bytes, thrown away: unknown emails cost the same bcrypt time as wrong passwords.
const DUMMY_HASH = '$2y$12$nq6OSiA6ZCxrlqdVj5CgR.31kfvd1PgZXqoM2MSE/5XY//MDflqCu';

/** The user for an email and password, or null; takes one bcrypt verification whether or not the email exists. */
export async function checkCredentials(pool: Pool, email: string, password: string): Promise<User | null> {
  // PostgreSQL text cannot hold NUL: such an email matches no one, and must not turn into a database error.
  const res = email.includes('\u0000') ? { rows: [] }
    : await pool.query<{ id: number; email: string; role: Role; password_hash: string; disabled_at: Date | null }>(q.findUserByEmail, [email.trim()]);
  const row = res.rows[0];
  // bcrypt reads only 72 bytes: a longer password would match on its prefix, so it is never right (same timing).
  const tooLong = Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES;
  const ok = await verifyPassword(password, (tooLong ? undefined : row?.password_hash) ?? DUMMY_HASH).catch(() => false);
  if (!row || tooLong || !ok || row.disabled_at) return null;
  return { id: row.id, email: row.email, role: row.role };
}
