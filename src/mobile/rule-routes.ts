// Alert rules in the mobile API, under the mobile bearer token. A user sees the global rules and their own, and
// manages only their own: another user's rule is not found (404), a global rule they can see is refused (403).
import {
  createRule, deleteRule, listVisibleRules, readRuleChanges, ruleActor, updateRule,
  type Actor, type FailureKind, type Result, type RuleChanges, type RuleFields,
} from '../alerts/rules.js';
import { Errors, type ApiError } from '../errors.js';
import type { JsonRequest, Reply } from '../http/json-route.js';
import { parseId } from '../http/params.js';
import type { TemplatedApp } from '../http/uws.js';
import { authedRoutes, fail, ok, type Method, type MobileApiDeps } from './api.js';
// Another user's rule is indistinguishable from one that does not exist.
const NOT_FOUND = fail(Errors.resourceNotFound);
const ERROR_OF: Record<FailureKind, (message: string) => ApiError> = {
  invalid: Errors.badRule,
  not_found: () => Errors.resourceNotFound,
  forbidden: Errors.ruleForbidden,
  device_not_found: Errors.ruleDeviceNotFound,
  limit: Errors.ruleLimitReached,
};
const label = (field: keyof RuleFields) => field;
const EXAMPLE = '{"metric_name":"heart_rate","operator":">","threshold":120}';

function reply<T>(result: Result<T>, data: (value: T) => unknown, status = 200): Reply {
  return result.ok ? ok(data(result.value), status) : fail(ERROR_OF[result.failure.kind](result.failure.message));
}

function bodyChanges(body: unknown): Result<RuleChanges> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, failure: { kind: 'invalid', message: `Send the rule's fields as a JSON object, e.g. ${EXAMPLE}.` } };
  }
  return readRuleChanges(body as Record<string, unknown>, label);
}

/** GET/POST /api/mobile/rules, GET/POST/PUT/DELETE /api/mobile/rules/:id and POST /api/mobile/rules/:id/delete. */
export function registerRuleRoutes(app: TemplatedApp, deps: MobileApiDeps): void {
  const { pool } = deps;
  type Handler = (req: JsonRequest, actor: Actor) => Promise<Reply>;
  const route = authedRoutes(app, deps);
  const authed = (method: Method, pattern: string, params: number, h: Handler) =>
    route(method, pattern, params, (req, user) => h(req, ruleActor(user)));

  authed('get', '/api/mobile/rules', 0, async (_req, actor) => ok({ rules: await listVisibleRules(pool, actor) }));

  authed('get', '/api/mobile/rules/:id', 1, async (req, actor) => {
    const id = parseId(req.params[0]);
    const [rule] = id === null ? [] : await listVisibleRules(pool, actor, id);
    return rule ? ok({ rule }) : NOT_FOUND;
  });

  authed('post', '/api/mobile/rules', 0, async (req, actor) => {
    const changes = bodyChanges(req.body);
    if (!changes.ok) return reply(changes, () => null);
    return reply(await createRule(pool, actor, changes.value, label), (rule) => ({ rule }), 201);
  });

  // Both methods change only the fields sent; the others keep their values.
  const update: Handler = async (req, actor) => {
    const id = parseId(req.params[0]);
    if (id === null) return NOT_FOUND;
    const changes = bodyChanges(req.body);
    if (!changes.ok) return reply(changes, () => null);
    if (Object.keys(changes.value).length === 0) return fail(Errors.badRule(`Send at least one field to change, e.g. {"threshold":125}.`));
    return reply(await updateRule(pool, actor, id, changes.value, label), (rule) => ({ rule }));
  };
  authed('post', '/api/mobile/rules/:id', 1, update);
  authed('put', '/api/mobile/rules/:id', 1, update);

  const remove: Handler = async (req, actor) => {
    const id = parseId(req.params[0]);
    if (id === null) return NOT_FOUND;
    return reply(await deleteRule(pool, actor, id), (deleted) => deleted);
  };
  authed('del', '/api/mobile/rules/:id', 1, remove);
  authed('post', '/api/mobile/rules/:id/delete', 1, remove);
}
