// The manual steps of an alert's life, shared by the dashboard and the mobile API: acknowledge (who and when)
// and resolve by hand (as the engine resolves, with an alert_resolved module event). Only alerts of devices
// the actor may see are found; anyone else's is "not found", never "forbidden", so ids reveal nothing.
import type { AlertChange } from '../ingest/batcher.js';
import { inTransaction, type Pool } from '../store/db.js';
import * as q from '../store/queries.js';

/** Who acts: the user's id, whether they are an admin (every device), and their email for the event detail. */
export interface AlertActor { userId: number; admin: boolean; email: string }
/** The actor of a logged-in user (mobile token or browser session). */
export const alertActor = (user: { id: number; role: string; email: string }): AlertActor =>
  ({ userId: user.id, admin: user.role === 'admin', email: user.email });

export interface AlertRecord {
  id: number; rule_id: number; device_id: number; metric_name: string; value: number; severity: string;
  status: 'open' | 'acknowledged' | 'resolved'; opened_at: Date; acknowledged_at: Date | null;
  acknowledged_by: number | null; resolved_at: Date | null;
}

export type AlertStepResult =
  | { ok: true; alert: AlertRecord }
  | { ok: false; kind: 'not_found' }
  /** The alert exists but is past this step: acknowledging a non-open alert, resolving a resolved one. */
  | { ok: false; kind: 'conflict'; status: string };

export interface ResolveResult { result: AlertStepResult; change: AlertChange | null }

/** Why the step matched no row: someone else's alert (not found), or one whose status does not allow it. */
async function whyNot(pool: Pool, actor: AlertActor, id: number): Promise<AlertStepResult> {
  const existing = (await pool.query<{ status: string }>(q.findVisibleAlert, [actor.userId, actor.admin, id])).rows[0];
  return existing ? { ok: false, kind: 'conflict', status: existing.status } : { ok: false, kind: 'not_found' };
}

/** Acknowledges an open alert: status 'acknowledged', with who and when. It still resolves by itself later. */
export async function acknowledgeAlert(pool: Pool, actor: AlertActor, id: number, atMs: number): Promise<AlertStepResult> {
  const res = await pool.query<AlertRecord>(q.acknowledgeAlert, [actor.userId, actor.admin, id, new Date(atMs)]);
  return res.rows[0] ? { ok: true, alert: res.rows[0] } : whyNot(pool, actor, id);
}

/**
 * Resolves an open or acknowledged alert by hand, storing the alert_resolved event in the same statement, under
 * the device's row lock (see q.lockAlertDevice).
 * Returns the live change to push as well. If the rule still fires, the next firing reading opens a new alert.
 */
export async function resolveAlert(pool: Pool, actor: AlertActor, id: number, atMs: number): Promise<ResolveResult> {
  const at = new Date(atMs);
  const row = await inTransaction(pool, async (c) => {
    await c.query(q.lockAlertDevice, [id]);
    return (await c.query<AlertRecord & { owner_id: number; latest_value: number | null }>(
      q.resolveAlertByHand, [actor.userId, actor.admin, id, at, actor.email])).rows[0];
  });
  if (!row) return { result: await whyNot(pool, actor, id), change: null };
  const { owner_id: ownerId, latest_value: latest, ...alert } = row;
  const change: AlertChange = {
    type: 'alert_resolved', alert_id: alert.id, rule_id: alert.rule_id, device_id: alert.device_id, owner_id: ownerId,
    metric_name: alert.metric_name, value: latest ?? alert.value, at: at.toISOString(),
  };
  return { result: { ok: true, alert }, change };
}
