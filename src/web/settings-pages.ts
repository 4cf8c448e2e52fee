import type { LiveSession } from '../auth/sessions.js';
import type { WebhookStatus } from '../alerts/webhooks.js';
import { html } from './html.js';
import { utcTime } from './key-metrics.js';
import { layout } from './layout.js';

const when = (d: Date | string | null) => (d === null ? 'never' : utcTime(d));

export interface SettingsView {
  webhook: WebhookStatus | null;
  /** Shown once, right after it was set. */
  newSecret?: string;
  message?: string;
  /** The URL typed into a refused form, to keep it. */
  url?: string;
}

/** The user's own settings: the webhook that receives their alert and device events (README "Webhooks"). */
export function settingsPage(session: LiveSession, view: SettingsView): string {
  const { webhook } = view;
  const status = webhook ? html`<table id="webhook">
<tbody>
<tr><th>URL</th><td>${webhook.url}</td></tr>
<tr><th>Pending deliveries</th><td>${webhook.pending}</td></tr>
<tr><th>Failed deliveries</th><td>${webhook.failed}</td></tr>
<tr><th>Last delivered</th><td>${when(webhook.last_delivered_at)}</td></tr>
<tr><th>Last error</th><td>${webhook.last_error ?? 'none'}</td></tr>
</tbody>
</table>
<form method="post" action="/settings/webhook/delete">
<input type="hidden" name="_csrf" value="${session.csrfToken}">
<button type="submit">Remove the webhook</button>
</form>` : html`<p>No webhook is set.</p>`;
  const secret = view.newSecret ? html`<div class="notice" id="webhook-secret">
<p><strong>Signing secret</strong> (shown only now; keep it with the receiver):</p>
<pre>${view.newSecret}</pre>
</div>` : '';
  return layout('Settings', html`<h1>Settings</h1>
<h2>Webhook</h2>
<p>The service POSTs a signed JSON message to this URL whenever an alert of your devices opens, is acknowledged or
resolves, and when one of your devices goes offline. See the README section "Webhooks" to check signatures.</p>
${view.message ? html`<p class="error" role="alert">${view.message}</p>` : ''}
${secret}
${status}
<h2>${webhook ? 'Change the webhook' : 'Set a webhook'}</h2>
<form method="post" action="/settings/webhook">
<input type="hidden" name="_csrf" value="${session.csrfToken}">
<label for="url">URL</label>
<input id="url" name="url" type="url" required value="${view.url ?? webhook?.url ?? ''}" placeholder="https://example.com/hooks/telemetry">
<label for="secret">Secret (optional: 16 to 256 characters; leave empty to have one generated)</label>
<input id="secret" name="secret" type="text" autocomplete="off">
<button type="submit">Save</button>
</form>`, { session, active: '/settings' });
}
