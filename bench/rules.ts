// W1 with the alert rules enabled and disabled: the switch, and proof from the database that the rules did
// (or did not) evaluate W1's readings, so a change that silently skips evaluation cannot pass as fast.
import type { Pool } from '../src/store/db.js';

/** Ingest workers re-read the watched metric names at most this often (src/workers/ingest-worker.ts). */
export const RULES_REREAD_MS = 1000;

/** Disables every enabled rule and waits until every worker has re-read them; returns the rules disabled. */
export async function disableAllRules(pool: Pool): Promise<number[]> {
  const res = await pool.query<{ id: number }>('UPDATE alert_rules SET enabled = false WHERE enabled RETURNING id');
  await waitForReread();
  return res.rows.map((r) => r.id);
}

/** Enables these rules again (those disableAllRules returned) and waits for the workers to re-read them. */
export async function enableRules(pool: Pool, ids: readonly number[]): Promise<void> {
  await pool.query('UPDATE alert_rules SET enabled = true WHERE id = ANY($1::int8[])', [ids]);
  await waitForReread();
}

const waitForReread = () => new Promise((r) => setTimeout(r, RULES_REREAD_MS + 300));

/** Rules that are enabled now (the default ones, seeded by migration 005). */
export async function countEnabledRules(pool: Pool): Promise<number> {
  return (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_rules WHERE enabled')).rows[0].n;
}

export interface RuleActivity {
  /** (rule, device) pairs whose state was written since `sinceMs` (W1's devices in alarm): the evaluation really ran. */
  pairsEvaluated: number;
  /** Alerts opened since `sinceMs` (one per device in alarm, in the first rules-on run). */
  alertsOpened: number;
}

export async function ruleActivitySince(pool: Pool, sinceMs: number): Promise<RuleActivity> {
  // last_at is the reading's recorded_at; W1 sends none, so it is the server's receive time.
  const since = new Date(sinceMs);
  const pairs = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_rule_state WHERE last_at >= $1', [since]);
  const alerts = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM alerts WHERE opened_at >= $1', [since]);
  return { pairsEvaluated: pairs.rows[0].n, alertsOpened: alerts.rows[0].n };
}
