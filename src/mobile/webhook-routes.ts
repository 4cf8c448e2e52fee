// The caller's own webhook in the mobile API: GET shows it with its delivery state, PUT sets it (the secret is
// returned once, generated when not given), DELETE removes it with its pending deliveries.
import type { User } from '../auth/users.js';
import { getWebhook, removeWebhook, setWebhook, webhookInputProblem } from '../alerts/webhooks.js';
import { Errors } from '../errors.js';
import type { JsonRequest, Reply } from '../http/json-route.js';
import type { TemplatedApp } from '../http/uws.js';
import { authedRoutes, fail, ok, type Method, type MobileApiDeps } from './api.js';
const EXAMPLE = '{"url":"https://example.com/hooks/telemetry"}';

/** GET/PUT/DELETE /api/mobile/webhook, plus POST for clients without PUT and POST .../delete for those without DELETE. */
export function registerWebhookRoutes(app: TemplatedApp, deps: MobileApiDeps): void {
  const { pool } = deps;
  const route = authedRoutes(app, deps);
  const authed = (method: Method, pattern: string, h: (req: JsonRequest, user: User) => Promise<Reply>) => route(method, pattern, 0, h);

  authed('get', '/api/mobile/webhook', async (_req, user) => {
    const webhook = await getWebhook(pool, user.id);
    return webhook ? ok({ webhook }) : fail(Errors.resourceNotFound);
  });

  const set = async (req: JsonRequest, user: User): Promise<Reply> => {
    const body = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail(Errors.badWebhook(`Send a JSON object, e.g. ${EXAMPLE}.`));
    const { url, secret, ...rest } = body as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) return fail(Errors.badWebhook(`Unknown field ${JSON.stringify(unknown[0].slice(0, 40))}: a webhook has url and an optional secret.`));
    const problem = webhookInputProblem(url, secret);
    if (problem) return fail(Errors.badWebhook(problem));
    const webhook = await setWebhook(pool, user.id, url as string, (secret as string | undefined) ?? null);
    return ok({ webhook });
  };
  authed('put', '/api/mobile/webhook', set);
  authed('post', '/api/mobile/webhook', set);

  const remove = async (_req: JsonRequest, user: User): Promise<Reply> =>
    (await removeWebhook(pool, user.id)) ? ok({ deleted: true }) : fail(Errors.resourceNotFound);
  authed('del', '/api/mobile/webhook', remove);
  authed('post', '/api/mobile/webhook/delete', remove);
}
