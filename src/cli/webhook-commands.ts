// The webhook:* commands: an operator sets, shows or removes a user's webhook (src/alerts/webhooks.ts).
import { getWebhook, removeWebhook, setWebhook, webhookInputProblem } from '../alerts/webhooks.js';
import { findUserId, UserInputError } from '../auth/users.js';
import type { Pool } from '../store/db.js';
import { required } from './args.js';

type Command = (pool: Pool, flags: Record<string, string>) => Promise<unknown>;

export const WEBHOOK_COMMANDS: Record<string, { usage: string; run: Command }> = {
  'webhook:set': {
    usage: 'webhook:set --user E --url URL [--secret S]   (prints the secret; generated when not given)',
    run: async (pool, f) => {
      const url = required(f, 'url');
      const problem = webhookInputProblem(url, f.secret);
      if (problem) throw new UserInputError(problem.replace(/^url\b/, '--url').replace(/^secret\b/, '--secret'));
      const userId = await findUserId(pool, required(f, 'user'));
      return { user: f.user, ...await setWebhook(pool, userId, url, f.secret ?? null) };
    },
  },
  'webhook:show': {
    usage: 'webhook:show --user E',
    run: async (pool, f) => {
      const webhook = await getWebhook(pool, await findUserId(pool, required(f, 'user')));
      if (!webhook) throw new UserInputError(`${f.user} has no webhook.`);
      return { user: f.user, ...webhook };
    },
  },
  'webhook:remove': {
    usage: 'webhook:remove --user E',
    run: async (pool, f) => {
      if (!(await removeWebhook(pool, await findUserId(pool, required(f, 'user'))))) throw new UserInputError(`${f.user} has no webhook.`);
      return { user: f.user, removed: true };
    },
  },
};
