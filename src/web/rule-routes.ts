// The alert rule pages over src/alerts/rules.ts: the same validation, ownership and limits as the CLI and the
// mobile API. A user sees the global rules and their own and manages only their own; an admin manages all.
import {
  createRule, deleteRule, listVisibleRules, readRuleChanges, ruleActor, updateRule,
  type Actor, type Failure, type RuleChanges, type RuleFields,
} from '../alerts/rules.js';
import type { LiveSession } from '../auth/sessions.js';
import type { Pool } from '../store/db.js';
import { notFoundPage } from './alert-pages.js';
import { parseId } from '../http/params.js';
import type { WebReply } from './respond-html.js';
import type { WebRouter } from './router.js';
import {
  canManage, deleteRulePage, EMPTY_RULE_FORM, forbiddenPage, ruleFormPage, ruleFormValues, rulesPage, type RuleFormValues,
} from './rule-pages.js';

export interface RuleRouteDeps { pool: Pool }

/** Field names as the form shows them, for the messages of rules.ts. */
const LABELS: Record<keyof RuleFields, string> = {
  owner_id: 'Owner', module: 'Module', device_id: 'Device id', metric_name: 'Metric name', operator: 'Operator',
  threshold: 'Threshold', clear_threshold: 'Clear threshold', for_count: 'Consecutive readings', severity: 'Severity',
  enabled: 'Enabled',
};
const label = (f: keyof RuleFields) => LABELS[f];

const actorOf = (session: LiveSession): Actor => ruleActor(session.user);

function formValues(form: URLSearchParams): RuleFormValues {
  const text = (name: string) => (form.get(name) ?? '').trim();
  return {
    metric_name: text('metric_name'), operator: text('operator'), threshold: text('threshold'),
    clear_threshold: text('clear_threshold'), for_count: text('for_count'), severity: text('severity'),
    module: text('module'), device_id: text('device_id'), enabled: form.has('enabled'), scope: text('scope'),
  };
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
/** A number when the text is one; otherwise the text itself, so rules.ts names what was typed in its message. */
const numberOr = (s: string): number | string => (DECIMAL.test(s) ? Number(s) : s);

/**
 * The form as rule changes for rules.ts to check. An empty optional field means none (for_count: 1); the
 * owner is chosen only when an admin creates a rule, and kept on edit.
 */
function changesOf(v: RuleFormValues, create: boolean, admin: boolean): Record<string, unknown> {
  const changes: Record<string, unknown> = {
    metric_name: v.metric_name, operator: v.operator, threshold: numberOr(v.threshold),
    clear_threshold: v.clear_threshold === '' ? null : numberOr(v.clear_threshold),
    for_count: v.for_count === '' ? 1 : numberOr(v.for_count), severity: v.severity,
    module: v.module === '' ? null : v.module, device_id: v.device_id === '' ? null : numberOr(v.device_id),
    enabled: v.enabled,
  };
  if (create && admin && v.scope === 'global') changes.owner_id = null;
  return changes;
}

/** GET /rules, /rules/new, /rules/:id/edit, /rules/:id/delete; POST /rules, /rules/:id, /rules/:id/delete. */
export function registerRuleRoutes(router: WebRouter, deps: RuleRouteDeps): void {
  const { pool } = deps;
  const visible = async (session: LiveSession, idText: string) => {
    const id = parseId(idText);
    return id === null ? undefined : (await listVisibleRules(pool, actorOf(session), id))[0];
  };
  const notFound = (session: LiveSession): WebReply => ({ status: 404, body: notFoundPage(session, 'alert rule', '/rules') });
  const forbidden = (session: LiveSession, message: string): WebReply => ({ status: 403, body: forbiddenPage(session, message, '/rules') });
  /** A refused form: access problems get their own page, anything else comes back in the form with the reason. */
  const refused = (session: LiveSession, ruleId: number | null, v: RuleFormValues, f: Failure): WebReply => {
    if (f.kind === 'not_found') return notFound(session);
    if (f.kind === 'forbidden' && ruleId !== null) return forbidden(session, f.message);
    return { status: f.kind === 'limit' ? 409 : f.kind === 'forbidden' ? 403 : 400, body: ruleFormPage(session, ruleId, v, f.message) };
  };

  router.page('/rules', async (req) =>
    ({ status: 200, body: rulesPage(req.session, await listVisibleRules(pool, actorOf(req.session))) }));

  router.page('/rules/new', async (req) => ({ status: 200, body: ruleFormPage(req.session, null, EMPTY_RULE_FORM) }));

  router.action('/rules', async (req) => {
    const v = formValues(req.form);
    const changes = readRuleChanges(changesOf(v, true, req.session.user.role === 'admin'), label);
    const r = changes.ok ? await createRule(pool, actorOf(req.session), changes.value, label) : changes;
    return r.ok ? { status: 303, location: '/rules' } : refused(req.session, null, v, r.failure);
  });

  router.page('/rules/:id/edit', async (req) => {
    const rule = await visible(req.session, req.params[0]);
    if (!rule) return notFound(req.session);
    if (!canManage(req.session, rule)) return forbidden(req.session, `Rule ${rule.id} is a global rule: only an admin may change it.`);
    return { status: 200, body: ruleFormPage(req.session, rule.id, ruleFormValues(rule)) };
  });

  router.action('/rules/:id', async (req) => {
    const id = parseId(req.params[0]);
    if (id === null) return notFound(req.session);
    const v = formValues(req.form);
    const changes = readRuleChanges(changesOf(v, false, req.session.user.role === 'admin'), label);
    const r = changes.ok ? await updateRule(pool, actorOf(req.session), id, changes.value as RuleChanges, label) : changes;
    return r.ok ? { status: 303, location: '/rules' } : refused(req.session, id, v, r.failure);
  });

  router.page('/rules/:id/delete', async (req) => {
    const rule = await visible(req.session, req.params[0]);
    if (!rule) return notFound(req.session);
    if (!canManage(req.session, rule)) return forbidden(req.session, `Rule ${rule.id} is a global rule: only an admin may delete it.`);
    return { status: 200, body: deleteRulePage(req.session, rule) };
  });

  router.action('/rules/:id/delete', async (req) => {
    const id = parseId(req.params[0]);
    if (id === null) return notFound(req.session);
    const r = await deleteRule(pool, actorOf(req.session), id);
    if (r.ok) return { status: 303, location: '/rules' };
    return r.failure.kind === 'forbidden' ? forbidden(req.session, r.failure.message) : notFound(req.session);
  });
}
