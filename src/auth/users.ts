import crypto from 'node:crypto';
import type pg from 'pg';
import type { Pool } from '../store/db.js';
import { inTransaction, SqlState, sqlState } from '../store/db.js';
import * as q from '../store/queries.js';
import { hashPassword, passwordProblem } from './passwords.js';

export type Role = 'admin' | 'user';
export const ROLES: readonly Role[] = ['admin', 'user'];
export interface User { id: number; email: string; role: Role }

export class UserInputError extends Error {}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export async function createUser(pool: Pool, email: string, password: string, role: Role = 'user'): Promise<User> {
  if (!EMAIL.test(email)) throw new UserInputError(`"${email}" is not an email address.`);
  if (!ROLES.includes(role)) throw new UserInputError(`Role must be admin or user; got "${role}".`);
  const problem = passwordProblem(password);
  if (problem) throw new UserInputError(problem);
  const hash = await hashPassword(password);
  try {
    const res = await pool.query<User>(q.insertUser, [email, hash, role]);
    return res.rows[0];
  } catch (err) {
    if (sqlState(err) === SqlState.uniqueViolation) throw new UserInputError(`A user with email ${email} already exists.`);
    throw err;
  }
}

export interface UserListing extends User { created_at: Date; disabled_at: Date | null }

/**
 * Changes a user and ends every mobile token and browser session of theirs in the same transaction, so no
 * request can pass on an old credential once the change is visible. Mobile tokens and sessions are checked
 * in the database on every request, so this takes effect on every instance at once.
 */
async function changeAndRevoke(pool: Pool, sql: string, params: unknown[], email: string): Promise<User> {
  return inTransaction(pool, async (c) => {
    const res = await c.query<User>(sql, params);
    const user = res.rows[0];
    if (!user) throw new UserInputError(`No user with email ${email}.`);
    await c.query(q.revokeUserCredentials, [user.id]);
    return user;
  });
}

/** Marks the user disabled (idempotent) and ends their sessions and mobile tokens. */
export function disableUser(pool: Pool, email: string): Promise<User> {
  return changeAndRevoke(pool, q.disableUser, [email], email);
}

/**
 * Refuses to take the last enabled admin away. The enabled admins' rows stay locked until the caller's
 * transaction ends, so two admins demoting or disabling each other at once cannot both pass.
 */
async function keepAnAdmin(c: pg.PoolClient, email: string, what: string): Promise<void> {
  const admins = (await c.query<{ id: number }>(q.lockEnabledAdmins)).rows.map((r) => r.id);
  const target = (await c.query<{ id: number }>(q.findUserByEmail, [email])).rows[0];
  if (target && admins.length === 1 && admins[0] === target.id) {
    throw new UserInputError(`${email} is the only enabled admin; make another user admin before you ${what} them.`);
  }
}

/** disableUser for the dashboard: the last enabled admin is never disabled. */
export function disableUserKeepingAdmin(pool: Pool, email: string): Promise<User> {
  return inTransaction(pool, async (c) => {
    await keepAnAdmin(c, email, 'disable');
    const user = (await c.query<User>(q.disableUser, [email])).rows[0];
    if (!user) throw new UserInputError(`No user with email ${email}.`);
    await c.query(q.revokeUserCredentials, [user.id]);
    return user;
  });
}

/**
 * Gives a user a role; refuses to demote the last enabled admin. Sessions and mobile tokens read the role on
 * every request, so the change applies at once without ending them.
 */
export async function setUserRole(pool: Pool, email: string, role: Role): Promise<User> {
  if (!ROLES.includes(role)) throw new UserInputError(`Role must be admin or user; got "${role}".`);
  return inTransaction(pool, async (c) => {
    if (role !== 'admin') await keepAnAdmin(c, email, 'demote');
    const user = (await c.query<User>(q.setUserRole, [email, role])).rows[0];
    if (!user) throw new UserInputError(`No user with email ${email}.`);
    return user;
  });
}

/** Lets a disabled user log in again; credentials ended by the disabling stay ended. */
export async function enableUser(pool: Pool, email: string): Promise<User> {
  const res = await pool.query<User>(q.enableUser, [email]);
  if (!res.rows[0]) throw new UserInputError(`No user with email ${email}.`);
  return res.rows[0];
}

/** Sets a new password (8 to 72 bytes, never truncated) and ends every session and mobile token of the user. */
export async function setUserPassword(pool: Pool, email: string, password: string): Promise<User> {
  const problem = passwordProblem(password);
  if (problem) throw new UserInputError(problem);
  const hash = await hashPassword(password);
  return changeAndRevoke(pool, q.setPassword, [email, hash], email);
}

/** Every user without password hashes, oldest first. */
export async function listUsers(pool: Pool): Promise<UserListing[]> {
  return (await pool.query<UserListing>(q.listUsers)).rows;
}

export async function findUserId(pool: Pool, email: string): Promise<number> {
  const res = await pool.query<{ id: number }>(q.findUserByEmail, [email]);
  if (!res.rows[0]) throw new UserInputError(`No user with email ${email}.`);
  return res.rows[0].id;
}

/**
 * On first start with no users at all, creates the admin from ADMIN_EMAIL/ADMIN_PASSWORD, or admin@localhost
 * with a random password that is printed once. Returns what was created, or null.
 */
export async function bootstrapAdmin(pool: Pool, email: string | null, password: string | null): Promise<{ user: User; generatedPassword: string | null } | null> {
  const { rows } = await pool.query<{ n: number }>(q.countUsers);
  if (rows[0].n > 0) return null;
  const generated = password ? null : crypto.randomBytes(12).toString('base64url');
  try {
    const user = await createUser(pool, email ?? 'admin@localhost', password ?? generated!, 'admin');
    return { user, generatedPassword: generated };
  } catch (err) {
    // Another instance created it first.
    if (err instanceof UserInputError && /already exists/.test(err.message)) return null;
    throw err;
  }
}
