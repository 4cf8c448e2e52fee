import { getWebhook, removeWebhook, setWebhook, webhookInputProblem } from '../alerts/webhooks.js';
import type { Pool } from '../store/db.js';
import type { WebRouter } from './router.js';
import { settingsPage } from './settings-pages.js';

/** GET /settings, POST /settings/webhook and /settings/webhook/delete: the user's own webhook. */
export function registerSettingsRoutes(router: WebRouter, deps: { pool: Pool }): void {
  const { pool } = deps;

  router.page('/settings', async (req) =>
    ({ status: 200, body: settingsPage(req.session, { webhook: await getWebhook(pool, req.session.user.id) }) }));

  router.action('/settings/webhook', async (req) => {
    const userId = req.session.user.id;
    const url = (req.form.get('url') ?? '').trim();
    const secret = (req.form.get('secret') ?? '').trim() || null;
    const problem = webhookInputProblem(url, secret);
    if (problem) return { status: 400, body: settingsPage(req.session, { webhook: await getWebhook(pool, userId), message: problem, url }) };
    const saved = await setWebhook(pool, userId, url, secret);
    return { status: 200, body: settingsPage(req.session, { webhook: await getWebhook(pool, userId), newSecret: saved.secret }) };
  });

  router.action('/settings/webhook/delete', async (req) => {
    await removeWebhook(pool, req.session.user.id);
    return { status: 303, location: '/settings' };
  });
}
