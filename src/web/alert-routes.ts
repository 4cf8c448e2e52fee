// The alerts pages: the list by status, acknowledge and resolve buttons, and the row fragment that
// alerts.js fetches for an alert opened while the page is open.
import { acknowledgeAlert, alertActor, resolveAlert, type AlertActor, type AlertStepResult } from '../alerts/lifecycle.js';
import type { LiveSession } from '../auth/sessions.js';
import type { LiveHub } from '../live/hub.js';
import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import {
  ALERT_FILTERS, alertConflictPage, alertRow, alertsPage, notFoundPage, parseFilter, type AlertFilter, type AlertListRow,
} from './alert-pages.js';
import { messagePage } from './pages.js';
import type { WebReply } from './respond-html.js';
import type { SignedInRequest, WebRouter } from './router.js';
import { parseId } from '../http/params.js';

export interface AlertRouteDeps {
  pool: Pool;
  now: () => number;
  /** Pushes a manual resolution to the other open pages and apps; absent in setups without live updates. */
  live?: LiveHub;
}

const actorOf = (session: LiveSession): AlertActor => alertActor(session.user);

/** GET /alerts, GET /alerts/:id/row, POST /alerts/:id/acknowledge and POST /alerts/:id/resolve. */
export function registerAlertRoutes(router: WebRouter, deps: AlertRouteDeps): void {
  const { pool } = deps;
  const list = async (session: LiveSession, filter: AlertFilter, id: number | null) => (await pool.query<AlertListRow>(
    q.listAlertsForPage, [session.user.id, session.user.role === 'admin', ALERT_FILTERS[filter], id])).rows;
  const notFound = (req: SignedInRequest): WebReply => ({ status: 404, body: notFoundPage(req.session, 'alert', '/alerts') });

  router.page('/alerts', async (req) => {
    const filter = parseFilter(req.query.get('status'));
    if (!filter) {
      return { status: 400, body: messagePage('Unknown filter', 'status must be open, acknowledged, resolved or all.') };
    }
    return { status: 200, body: alertsPage(req.session, filter, await list(req.session, filter, null)) };
  });

  router.page('/alerts/:id/row', async (req) => {
    const id = parseId(req.params[0]);
    const [alert] = id === null ? [] : await list(req.session, 'all', id);
    if (!alert) return notFound(req);
    return { status: 200, body: alertRow(req.session, alert, parseFilter(req.query.get('back')) ?? 'unresolved').text };
  });

  /** One manual step: 303 back to the list it came from, 404 for an alert the user cannot see, 409 when past it. */
  const step = (verb: 'acknowledge' | 'resolve', run: (actor: AlertActor, id: number) => Promise<AlertStepResult>) =>
    async (req: SignedInRequest): Promise<WebReply> => {
      const back = parseFilter(req.form.get('back')) ?? 'unresolved';
      const id = parseId(req.params[0]);
      const r: AlertStepResult = id === null ? { ok: false, kind: 'not_found' } : await run(actorOf(req.session), id);
      if (r.ok) return { status: 303, location: `/alerts?status=${back}` };
      if (r.kind === 'not_found') return notFound(req);
      return {
        status: 409,
        body: alertConflictPage(req.session, `Cannot ${verb} this alert`, `This alert is already ${r.status}; ${
          verb === 'acknowledge' ? 'only an open alert can be acknowledged' : 'a resolved alert stays resolved'}.`, back),
      };
    };

  router.action('/alerts/:id/acknowledge', step('acknowledge', (actor, id) => acknowledgeAlert(pool, actor, id, deps.now())));

  router.action('/alerts/:id/resolve', step('resolve', async (actor, id) => {
    const { result, change } = await resolveAlert(pool, actor, id, deps.now());
    if (change) deps.live?.alertChanged(change);
    return result;
  }));
}
