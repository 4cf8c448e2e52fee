import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import { verifyPassword } from './passwords.js';
import type { Role, User } from './users.js';

// A real cost-12 hash of a random string: unknown emails cost the same bcrypt time as wrong passwords.
const DUMMY_HASH = '$2y$12$lDNVkJsRkTR..zUbOWpMr.aJetF08gKa3.IuQVhMWWRoS4Pwzpwoy';

/** The user for an email and password, or null; takes one bcrypt verification whether or not the email exists. */
export async function checkCredentials(pool: Pool, email: string, password: string): Promise<User | null> {
  const res = await pool.query<{ id: number; email: string; role: Role; password_hash: string; disabled_at: Date | null }>(q.findUserByEmail, [email]);
  const row = res.rows[0];
  const ok = await verifyPassword(password, row?.password_hash ?? DUMMY_HASH).catch(() => false);
  if (!row || !ok || row.disabled_at) return null;
  return { id: row.id, email: row.email, role: row.role };
}
