import type { LiveSession } from '../auth/sessions.js';
import { MODULES, type Module } from '../ingest/modules.js';
import { html, type Html } from './html.js';
import { formatValue, isoTime, keyMetricsOf, relativeTime, sampleBody, unitOf, type Latest } from './key-metrics.js';
import { layout } from './layout.js';

/** A device as listVisibleDevices returns it. */
export interface VisibleDevice {
  id: number; name: string; module: Module; status: string; last_seen_at: Date | null; latest: Latest;
}

export function statusBadge(status: string): Html {
  const s = status === 'online' ? 'online' : 'offline';
  return html`<span class="badge ${s}" data-field="status">${s}</span>`;
}

/** `<time>` with the ISO instant for the scripts, relative text for people, the full UTC time on hover. */
export function lastSeen(at: Date | null, nowMs: number): Html {
  if (at === null) return html`<time data-field="last-seen">never</time>`;
  const iso = isoTime(at);
  return html`<time data-field="last-seen" datetime="${iso}" title="${iso}">${relativeTime(at, nowMs)}</time>`;
}

function keyValues(d: VisibleDevice): Html {
  const items = keyMetricsOf(d.module, d.latest).map((name) => {
    const v = d.latest[name];
    const unit = unitOf(name, v?.unit);
    return html`<li><span class="metric-name">${name}</span> <span class="metric-value" data-metric="${name}"${unit ? html` data-unit="${unit}"` : ''}${v ? html` data-at="${v.recorded_at}"` : ''}>${v ? formatValue(v.value, unit) : '—'}</span></li>`;
  });
  return html`<ul class="key-values">${items}</ul>`;
}

export function dashboardPage(session: LiveSession, devices: readonly VisibleDevice[], openAlerts: ReadonlyMap<number, number>, nowMs: number): string {
  const total = devices.reduce((n, d) => n + (openAlerts.get(d.id) ?? 0), 0);
  const rows = devices.map((d) => {
    const open = openAlerts.get(d.id) ?? 0;
    return html`<tr data-device-id="${d.id}" data-module="${d.module}">
<td data-label="Name"><a href="/devices/${d.id}">${d.name}</a></td>
<td data-label="Module">${d.module}</td>
<td data-label="Status">${statusBadge(d.status)}</td>
<td data-label="Last seen">${lastSeen(d.last_seen_at, nowMs)}</td>
<td data-label="Key values">${keyValues(d)}</td>
<td data-label="Open alerts"><span class="open-alerts${open > 0 ? ' has-alerts' : ''}" data-field="open-alerts">${open}</span></td>
</tr>
`;
  });
  return layout('Dashboard', html`<h1>Devices</h1>
<p class="summary">${devices.length} device${devices.length === 1 ? '' : 's'} · open alerts: <strong id="open-alerts-total">${total}</strong>
· <a href="/devices/new">Add device</a></p>
${devices.length === 0 ? html`<p>No devices yet. <a href="/devices/new">Add your first device</a>.</p>` : html`<div class="table-wrap">
<table id="devices" class="dashboard">
<thead><tr><th>Name</th><th>Module</th><th>Status</th><th>Last seen</th><th>Key values</th><th>Open alerts</th></tr></thead>
<tbody>
${rows}</tbody>
</table>
</div>`}`, { session, active: '/devices', scripts: ['live.js', 'format.js', 'dashboard.js'] });
}

export interface NewDeviceForm { formId: string; name?: string; module?: string; message?: string }

export function newDevicePage(session: LiveSession, form: NewDeviceForm): string {
  const options = MODULES.map((m) => html`<option value="${m}"${m === (form.module ?? 'health') ? html` selected` : ''}>${m}</option>`);
  return layout('Add device', html`<h1>Add device</h1>
${form.message ? html`<p class="error" role="alert">${form.message}</p>` : ''}
<form method="post" action="/devices" id="new-device">
<input type="hidden" name="_csrf" value="${session.csrfToken}">
<input type="hidden" name="_form" value="${form.formId}">
<label for="name">Name</label>
<input id="name" name="name" type="text" maxlength="200" required value="${form.name ?? ''}">
<label for="module">Module</label>
<select id="module" name="module">${options}</select>
<button type="submit">Create device</button>
</form>`, { session, active: '/devices/new' });
}

export interface TokenPageInput { id: number; name: string; module: Module; token: string; origin: string; rotated: boolean }

/**
 * The one page that ever shows a device token: the answer to the POST that created it (never stored, never
 * on a GET; the no-store header keeps it out of the history cache).
 */
export function tokenPage(session: LiveSession, t: TokenPageInput): string {
  const curl = `curl -X POST ${t.origin}/api/telemetry-ingest -H 'Authorization: Bearer ${t.token}' -H 'Content-Type: application/json' -d '${sampleBody(t.module)}'`;
  const title = t.rotated ? 'New device token' : 'Device created';
  return layout(title, html`<h1>${title}</h1>
<p>${t.rotated ? 'The token of ' : 'Created '}<a href="/devices/${t.id}">${t.name}</a> (${t.module})${t.rotated ? ' was replaced; the old token is refused from now on.' : '.'}</p>
<div class="notice">
<p><strong>Copy this token now: it is shown only once.</strong> The service stores only its hash.</p>
<p><code id="device-token" class="token">${t.token}</code></p>
<button type="button" class="copy" data-copy="device-token">Copy token</button>
</div>
<h2>Send a first reading</h2>
<pre id="curl-example">${curl}</pre>
<button type="button" class="copy" data-copy="curl-example">Copy command</button>
<p><a href="/devices/${t.id}">Go to the device</a> · <a href="/devices">Dashboard</a></p>`,
  { session, active: t.rotated ? '/devices' : '/devices/new', scripts: ['format.js', 'device.js'] });
}

const CONFIRM = {
  'rotate-token': {
    title: 'Rotate token', button: 'Rotate token',
    text: 'A new token replaces the current one. The device keeps sending with the old token until you configure the new one, and every such request is refused.',
  },
  delete: {
    title: 'Delete device', button: 'Delete device',
    text: 'The device disappears from the dashboard and its token is refused from now on. Its stored readings stay until retention removes them.',
  },
} as const;

export type ConfirmAction = keyof typeof CONFIRM;

/** The confirmation step before a rotation or a deletion: a GET page holding the POST form (no inline confirm()). */
export function confirmPage(session: LiveSession, d: { id: number; name: string }, action: ConfirmAction, formId: string): string {
  const c = CONFIRM[action];
  return layout(`${c.title}: ${d.name}`, html`<h1>${c.title}: ${d.name}</h1>
<p>${c.text}</p>
<form method="post" action="/devices/${d.id}/${action}" id="confirm-form">
<input type="hidden" name="_csrf" value="${session.csrfToken}">
<input type="hidden" name="_form" value="${formId}">
<button type="submit" class="${action === 'delete' ? 'danger' : ''}">${c.button}</button>
</form>
<p><a href="/devices/${d.id}">Cancel</a></p>`, { session, active: '/devices' });
}

export function deviceNotFoundPage(session: LiveSession): string {
  return layout('Device not found', html`<h1>Device not found</h1>
<p>There is no such device in your account.</p>
<p><a href="/devices">Dashboard</a></p>`, { session, active: '/devices' });
}
