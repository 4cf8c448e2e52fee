// The admin's user management: list, create, disable, enable and change role. For anyone but an admin every
// /users route is a 404, as if it did not exist. An admin cannot disable or demote themselves, and the last
// enabled admin cannot be taken away by anyone (src/auth/users.ts), so the service always keeps an admin.
import type { LiveSession } from '../auth/sessions.js';
import {
  createUser, disableUserKeepingAdmin, enableUser, listUsers, ROLES, setUserRole, UserInputError, type Role,
} from '../auth/users.js';
import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import { notFoundPage } from './alert-pages.js';
import { parseId } from '../http/params.js';
import type { WebReply } from './respond-html.js';
import type { SignedInHandler, SignedInRequest, WebRouter } from './router.js';
import { userRefusedPage, usersPage } from './user-pages.js';
import type { LiveHub } from '../live/hub.js';

export interface UserRouteDeps {
  pool: Pool;
  /** Ends a disabled or re-roled user's live sockets on this instance at once (others within LIVE_RECHECK_MS). */
  live?: Pick<LiveHub, 'endUser'>;
}

const nothingHere = (session: LiveSession): WebReply => ({ status: 404, body: notFoundPage(session, 'page', '/devices') });

/** GET /users; POST /users, /users/:id/disable, /users/:id/enable, /users/:id/role. Admins only. */
export function registerUserRoutes(router: WebRouter, deps: UserRouteDeps): void {
  const { pool } = deps;
  const adminOnly = (h: SignedInHandler): SignedInHandler => (req) =>
    (req.session.user.role === 'admin' ? h(req) : Promise.resolve(nothingHere(req.session)));
  const refused = (req: SignedInRequest, text: string): WebReply => ({ status: 409, body: userRefusedPage(req.session, text) });

  /** A change to the user named by :id, with the message of a refused one as a page. */
  const change = (run: (req: SignedInRequest, target: { id: number; email: string }) => Promise<WebReply | void>) =>
    adminOnly(async (req) => {
      const id = parseId(req.params[0]);
      const target = id === null ? undefined : (await pool.query<{ id: number; email: string }>(q.findUserById, [id])).rows[0];
      if (!target) return { status: 404, body: notFoundPage(req.session, 'user', '/users') };
      try {
        return (await run(req, target)) ?? { status: 303, location: '/users' };
      } catch (err) {
        if (err instanceof UserInputError) return refused(req, err.message);
        throw err;
      }
    });

  router.page('/users', adminOnly(async (req) => ({ status: 200, body: usersPage(req.session, await listUsers(pool)) })));

  router.action('/users', adminOnly(async (req) => {
    const email = (req.form.get('email') ?? '').trim();
    const role = req.form.get('role') ?? 'user';
    try {
      await createUser(pool, email, req.form.get('password') ?? '', role as Role);
      return { status: 303, location: '/users' };
    } catch (err) {
      if (!(err instanceof UserInputError)) throw err;
      return { status: 400, body: usersPage(req.session, await listUsers(pool), { email, role }, err.message) };
    }
  }));

  router.action('/users/:id/disable', change(async (req, target) => {
    if (target.id === req.session.user.id) return refused(req, 'You cannot disable your own account; another admin can.');
    await disableUserKeepingAdmin(pool, target.email);
    deps.live?.endUser(target.id);
  }));

  router.action('/users/:id/enable', change(async (_req, target) => { await enableUser(pool, target.email); }));

  router.action('/users/:id/role', change(async (req, target) => {
    const role = req.form.get('role') ?? '';
    if (!(ROLES as readonly string[]).includes(role)) return { status: 400, body: userRefusedPage(req.session, `Role must be admin or user; got "${role}".`) };
    if (target.id === req.session.user.id && role !== 'admin') {
      return refused(req, 'You cannot remove your own admin role; another admin can.');
    }
    await setUserRole(pool, target.email, role as Role);
    deps.live?.endUser(target.id);
  }));
}
