// Templates of the alerts page (GET /alerts) and its row fragment (GET /alerts/:id/row, fetched by alerts.js).
import type { LiveSession } from '../auth/sessions.js';
import { html, type Html } from './html.js';
import { layout } from './layout.js';
import { utcTime } from './key-metrics.js';

export interface AlertListRow {
  id: number; rule_id: number; device_id: number; device_name: string; metric_name: string; value: number;
  severity: string; status: string; opened_at: Date; acknowledged_at: Date | null;
  acknowledged_by_email: string | null; resolved_at: Date | null;
}

/** The filters of the page: `unresolved` (the default) is open and acknowledged together. */
export const ALERT_FILTERS = {
  unresolved: ['open', 'acknowledged'],
  open: ['open'],
  acknowledged: ['acknowledged'],
  resolved: ['resolved'],
  all: ['open', 'acknowledged', 'resolved'],
} as const;
export type AlertFilter = keyof typeof ALERT_FILTERS;
const FILTER_LABELS: Record<AlertFilter, string> = {
  unresolved: 'Unresolved', open: 'Open', acknowledged: 'Acknowledged', resolved: 'Resolved', all: 'All',
};

export function parseFilter(s: string | null): AlertFilter | null {
  if (s === null || s === '') return 'unresolved';
  return Object.hasOwn(ALERT_FILTERS, s) ? (s as AlertFilter) : null;
}

/** "2026-03-01 08:00:00 UTC" in a <time> element, or an empty cell's dash. */
export function when(v: Date | string | null): Html | string {
  if (v === null) return '–';
  const d = v instanceof Date ? v : new Date(v);
  return html`<time datetime="${d.toISOString()}">${utcTime(d)}</time>`;
}

const KNOWN_SEVERITIES = ['info', 'warning', 'critical'];
export const severityBadge = (severity: string): Html =>
  html`<span class="badge ${KNOWN_SEVERITIES.includes(severity) ? severity : ''}">${severity}</span>`;

/** One button in a POST form with the session's CSRF token; `back` returns to the same filter. */
function actionButton(session: LiveSession, action: string, label: string, back: AlertFilter): Html {
  return html`<form class="inline" method="post" action="${action}">
<input type="hidden" name="_csrf" value="${session.csrfToken}">
<input type="hidden" name="back" value="${back}">
<button type="submit">${label}</button>
</form>`;
}

/** One alert as a table row; also the body of GET /alerts/:id/row for rows added live. */
export function alertRow(session: LiveSession, a: AlertListRow, back: AlertFilter): Html {
  const actions = [
    a.status === 'open' ? actionButton(session, `/alerts/${a.id}/acknowledge`, 'Acknowledge', back) : '',
    a.status !== 'resolved' ? actionButton(session, `/alerts/${a.id}/resolve`, 'Resolve', back) : '',
  ];
  return html`<tr data-alert-id="${a.id}" data-status="${a.status}" class="alert-${a.status}">
<td data-label="Device"><a href="/devices/${a.device_id}">${a.device_name}</a></td>
<td data-label="Metric">${a.metric_name}</td>
<td data-label="Value">${a.value}</td>
<td data-label="Severity">${severityBadge(a.severity)}</td>
<td data-label="Status" class="alert-status">${a.status}</td>
<td data-label="Opened">${when(a.opened_at)}</td>
<td data-label="Acknowledged">${when(a.acknowledged_at)}${a.acknowledged_by_email ? html` <span class="by">by ${a.acknowledged_by_email}</span>` : ''}</td>
<td data-label="Resolved">${when(a.resolved_at)}</td>
<td data-label="Actions" class="actions">${actions}</td>
</tr>
`;
}

export function alertsPage(session: LiveSession, filter: AlertFilter, alerts: readonly AlertListRow[]): string {
  const tabs = (Object.keys(ALERT_FILTERS) as AlertFilter[]).map((f) =>
    html`<a href="/alerts?status=${f}"${f === filter ? html` aria-current="page"` : ''}>${FILTER_LABELS[f]}</a>`);
  // data-statuses tells alerts.js whether a newly opened alert belongs in this list.
  return layout('Alerts', html`<h1>Alerts</h1>
<nav class="filters" aria-label="Filter by status">${tabs}</nav>
<p id="no-alerts"${alerts.length ? html` hidden` : ''}>No ${filter === 'all' ? '' : FILTER_LABELS[filter].toLowerCase() + ' '}alerts.</p>
<div class="table-wrap">
<table id="alerts" class="stack" data-filter="${filter}" data-statuses="${ALERT_FILTERS[filter].join(' ')}">
<thead><tr><th>Device</th><th>Metric</th><th>Value</th><th>Severity</th><th>Status</th><th>Opened</th><th>Acknowledged</th><th>Resolved</th><th></th></tr></thead>
<tbody>
${alerts.map((a) => alertRow(session, a, filter))}</tbody>
</table>
</div>
${alerts.length >= 500 ? html`<p>Showing the newest 500.</p>` : ''}`,
  { session, active: '/alerts', scripts: ['live.js', 'alerts.js'] });
}

/** A refused step on an alert (409): says what state it is in, and leads back to the list. */
export function alertConflictPage(session: LiveSession, title: string, text: string, back: AlertFilter): string {
  return layout(title, html`<h1>${title}</h1>
<p>${text}</p>
<p><a href="/alerts?status=${back}">Back to the alerts</a></p>`, { session, active: '/alerts' });
}

export function notFoundPage(session: LiveSession, what: string, back: string): string {
  return layout('Not found', html`<h1>Not found</h1>
<p>There is no ${what} with that id that you can see.</p>
<p><a href="${back}">Back</a></p>`, { session });
}
