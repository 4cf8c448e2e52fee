// Alert rules: validation, and the create, list, update and delete operations shared by the CLI and the mobile
// API. Bad input and refused access come back as results, never as throws: the CLI prints the message, the API
// maps the kind to a status. The ingest workers pick every change up within a second by themselves.
import type pg from 'pg';
import { MODULES, type Module } from '../ingest/modules.js';
import { METRIC_NAME } from '../ingest/normalise.js';
import { inTransaction, type Pool } from '../store/db.js';
import * as q from '../store/queries.js';

export const OPERATORS = ['>', '>=', '<', '<=', '==', '!='] as const;
export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Operator = (typeof OPERATORS)[number];
export type Severity = (typeof SEVERITIES)[number];
export const MAX_FOR_COUNT = 1000;
/** The most rules a user (not an admin) may own: every rule is evaluated on every matching reading. */
export const MAX_RULES_PER_USER = 100;

/** What a caller may set; create fills the rest from RULE_DEFAULTS. */
export interface RuleFields {
  owner_id: number | null;
  module: Module | null;
  device_id: number | null;
  metric_name: string;
  operator: Operator;
  threshold: number;
  clear_threshold: number | null;
  for_count: number;
  severity: Severity;
  enabled: boolean;
}
export interface Rule extends RuleFields { id: number; owner: string | null; created_at: Date }
export type RuleChanges = Partial<RuleFields>;

export const RULE_FIELDS = ['owner_id', 'module', 'device_id', 'metric_name', 'operator', 'threshold', 'clear_threshold',
  'for_count', 'severity', 'enabled'] as const satisfies readonly (keyof RuleFields)[];
const REQUIRED = ['metric_name', 'operator', 'threshold'] as const;
const RULE_DEFAULTS = { module: null, device_id: null, clear_threshold: null, for_count: 1, severity: 'warning', enabled: true } as const;

export type FailureKind = 'invalid' | 'not_found' | 'forbidden' | 'device_not_found' | 'limit';
export interface Failure { kind: FailureKind; message: string }
export type Result<T> = { ok: true; value: T } | { ok: false; failure: Failure };

/** Who acts. The CLI operator (userId null) and admins may do anything; a user manages only the rules they own. */
export interface Actor { userId: number | null; admin: boolean }
export const CLI_OPERATOR: Actor = { userId: null, admin: true };
/** The actor of a logged-in user (mobile token or browser session). */
export const ruleActor = (user: { id: number; role: string }): Actor => ({ userId: user.id, admin: user.role === 'admin' });

/** How the caller names a field in messages: "clear_threshold" in the API, "--clear-threshold" on the CLI. */
export type Label = (field: keyof RuleFields) => string;

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const fail = (kind: FailureKind, message: string): { ok: false; failure: Failure } => ({ ok: false, failure: { kind, message } });
const shown = (v: unknown) =>
  typeof v === 'string' ? JSON.stringify(v.slice(0, 80)) : typeof v === 'number' ? String(v) : String(JSON.stringify(v)).slice(0, 80);
const isId = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

/** The problem with one field's value, or null. */
function fieldProblem(field: keyof RuleFields, v: unknown, name: string): string | null {
  switch (field) {
    case 'metric_name':
      return typeof v === 'string' && METRIC_NAME.test(v) ? null
        : `${name} must be 1 to 64 characters from A-Z a-z 0-9 _ . : / -; got ${shown(v)}.`;
    case 'operator':
      return (OPERATORS as readonly unknown[]).includes(v) ? null : `${name} must be one of ${OPERATORS.join(' ')}; got ${shown(v)}.`;
    case 'threshold':
      return typeof v === 'number' && Number.isFinite(v) ? null : `${name} must be a finite number; got ${shown(v)}.`;
    case 'clear_threshold':
      return v === null || (typeof v === 'number' && Number.isFinite(v)) ? null : `${name} must be a finite number or none; got ${shown(v)}.`;
    case 'for_count':
      return Number.isInteger(v) && (v as number) >= 1 && (v as number) <= MAX_FOR_COUNT ? null
        : `${name} must be a whole number from 1 to ${MAX_FOR_COUNT}; got ${shown(v)}.`;
    case 'severity':
      return (SEVERITIES as readonly unknown[]).includes(v) ? null : `${name} must be one of ${SEVERITIES.join(', ')}; got ${shown(v)}.`;
    case 'module':
      return v === null || (MODULES as readonly unknown[]).includes(v) ? null : `${name} must be one of ${MODULES.join(', ')}; got ${shown(v)}.`;
    case 'device_id':
      return v === null || isId(v) ? null : `${name} must be a device id (a positive whole number); got ${shown(v)}.`;
    case 'owner_id':
      return v === null || isId(v) ? null : `${name} must be a user id (a positive whole number); got ${shown(v)}.`;
    case 'enabled':
      return typeof v === 'boolean' ? null : `${name} must be true or false; got ${shown(v)}.`;
  }
}

/** Checks the fields present in `raw` (unknown ones refused) and returns them as changes. */
export function readRuleChanges(raw: Record<string, unknown>, label: Label): Result<RuleChanges> {
  const unknown = Object.keys(raw).filter((k) => !(RULE_FIELDS as readonly string[]).includes(k));
  if (unknown.length) return fail('invalid', `Unknown field ${shown(unknown[0])}; a rule has ${RULE_FIELDS.map(label).join(', ')}.`);
  for (const [field, v] of Object.entries(raw)) {
    const problem = fieldProblem(field as keyof RuleFields, v, label(field as keyof RuleFields));
    if (problem) return fail('invalid', problem);
  }
  return ok(raw as RuleChanges);
}

/** Whole-rule consistency: the clear threshold must lie on the clearing side of the threshold. */
function ruleProblem(r: RuleFields, label: Label): string | null {
  if (r.clear_threshold === null) return null;
  const clear = label('clear_threshold');
  if (r.operator === '==' || r.operator === '!=') {
    return `${clear} applies only to the operators > >= < <=; a rule with ${r.operator} clears when its condition stops holding.`;
  }
  const above = r.operator === '>' || r.operator === '>=';
  if (above ? r.clear_threshold > r.threshold : r.clear_threshold < r.threshold) {
    return `${clear} (${r.clear_threshold}) must be ${above ? 'at or below' : 'at or above'} ${label('threshold')} (${r.threshold}) ` +
      `for ${r.operator}: the alert opens when the value is ${r.operator} ${r.threshold} and resolves once it is no longer ${r.operator} ${r.clear_threshold}.`;
  }
  return null;
}

type Db = pg.Pool | pg.PoolClient;
interface LockedRule extends RuleFields { id: number; device_owner_id: number | null }

/** Owner and device checks for the rule as it will be stored; `before` is the stored rule on update. */
async function accessProblem(db: Db, actor: Actor, r: RuleFields, before: LockedRule | null, label: Label): Promise<Failure | null> {
  if (!actor.admin && r.owner_id === null) {
    return { kind: 'forbidden', message: `Only an admin may own a global rule (${label('owner_id')} null); leave ${label('owner_id')} out to own the rule yourself.` };
  }
  if (!actor.admin && r.owner_id !== actor.userId) {
    return { kind: 'forbidden', message: `A user may own only their own rules; leave ${label('owner_id')} out.` };
  }
  if (r.owner_id !== null && r.owner_id !== before?.owner_id) {
    const found = (await db.query<{ found: boolean }>(q.userExists, [r.owner_id])).rows[0].found;
    if (!found) return { kind: 'invalid', message: `${label('owner_id')} ${r.owner_id} names no user.` };
  }
  if (r.device_id === null) return null;
  const d = (await db.query<{ id: number; owner_id: number; module: Module; deleted: boolean }>(q.findDeviceForRule, [r.device_id])).rows[0];
  if (r.device_id !== before?.device_id && (!d || d.deleted || (!actor.admin && d.owner_id !== actor.userId))) {
    return { kind: 'device_not_found', message: `${label('device_id')} ${r.device_id} names no device${actor.admin ? '' : ' of yours'}.` };
  }
  if (d && r.module !== null && d.module !== r.module) {
    return { kind: 'invalid', message: `Device ${d.id} is a ${d.module} device, so a rule for ${label('module')} ${r.module} could never fire on it; drop ${label('module')} or make it ${d.module}.` };
  }
  if (d && r.owner_id !== null && d.owner_id !== r.owner_id) {
    return { kind: 'invalid', message: `Device ${d.id} belongs to another user than the rule's owner, so the rule could never fire; give the rule the device's owner, or make it global.` };
  }
  return null;
}

const columns = (r: RuleFields) => RULE_FIELDS.map((f) => r[f]);

/** Creates a rule; absent fields take their defaults, and the owner defaults to the actor (none on the CLI). */
export async function createRule(pool: Pool, actor: Actor, changes: RuleChanges, label: Label): Promise<Result<Rule>> {
  const missing = REQUIRED.filter((f) => changes[f] === undefined);
  if (missing.length) return fail('invalid', `A rule needs ${missing.map(label).join(', ')}.`);
  const rule = { ...RULE_DEFAULTS, owner_id: actor.userId, ...changes } as RuleFields;
  const problem = ruleProblem(rule, label);
  if (problem) return fail('invalid', problem);
  const refused = await accessProblem(pool, actor, rule, null, label);
  if (refused) return { ok: false, failure: refused };
  if (!actor.admin && (await pool.query<{ n: number }>(q.countRulesOfOwner, [actor.userId])).rows[0].n >= MAX_RULES_PER_USER) {
    return fail('limit', `You already own ${MAX_RULES_PER_USER} rules, the most a user may; change or delete one instead.`);
  }
  return ok((await pool.query<Rule>(q.insertRule, columns(rule))).rows[0]);
}

/** Why the actor may not change or delete this rule, or null. Rules they cannot see are simply not found. */
function manageProblem(actor: Actor, id: number, rule: LockedRule | undefined): Failure | null {
  const notFound: Failure = { kind: 'not_found', message: `No rule with id ${id}.` };
  if (!rule) return notFound;
  if (actor.admin || rule.owner_id === actor.userId) return null;
  if (rule.owner_id === null && (rule.device_id === null || rule.device_owner_id === actor.userId)) {
    return { kind: 'forbidden', message: `Rule ${id} is a global rule: only an admin may change or delete it.` };
  }
  return notFound;
}

/**
 * Applies the changes present, checked as a whole against the stored rule. A rule whose fields changed counts
 * its for_count run afresh; its unresolved alerts stay and resolve under the new clear condition.
 */
export function updateRule(pool: Pool, actor: Actor, id: number, changes: RuleChanges, label: Label): Promise<Result<Rule>> {
  return inTransaction(pool, async (c) => {
    const before = (await c.query<LockedRule>(q.lockRuleForUpdate, [id])).rows[0];
    const denied = manageProblem(actor, id, before);
    if (denied) return { ok: false, failure: denied };
    const rule = { ...before, ...changes };
    const problem = ruleProblem(rule, label);
    if (problem) return fail('invalid', problem);
    const refused = await accessProblem(c, actor, rule, before, label);
    if (refused) return { ok: false, failure: refused };
    const updated = (await c.query<Rule>(q.updateRule, [id, ...columns(rule)])).rows[0];
    if (RULE_FIELDS.some((f) => rule[f] !== before[f])) await c.query(q.resetRuleState, [id]);
    return ok(updated);
  });
}

/** Deletes a rule with its for_count state and every alert it ever opened; disable it instead to keep them. */
export function deleteRule(pool: Pool, actor: Actor, id: number): Promise<Result<{ id: number; deleted: true; alerts_deleted: number }>> {
  return inTransaction(pool, async (c) => {
    const denied = manageProblem(actor, id, (await c.query<LockedRule>(q.lockRuleForDelete, [id])).rows[0]);
    if (denied) return { ok: false, failure: denied };
    const alerts = await c.query(q.deleteRuleAlerts, [id]);
    await c.query(q.deleteRule, [id]);
    return ok({ id, deleted: true as const, alerts_deleted: alerts.rowCount ?? 0 });
  });
}

/** The rules an API caller may see (an admin: all), oldest first; `id` narrows to one. */
export async function listVisibleRules(pool: Pool, actor: Actor, id: number | null = null): Promise<Rule[]> {
  return (await pool.query<Rule>(q.listVisibleRules, [actor.userId, actor.admin, id])).rows;
}

/** Every rule ('all'), the global ones (null), or those of one owner, oldest first. */
export async function listRulesByOwner(pool: Pool, owner: 'all' | number | null): Promise<Rule[]> {
  return (await pool.query<Rule>(q.listRulesByOwner, [owner === 'all', owner === 'all' ? null : owner])).rows;
}
