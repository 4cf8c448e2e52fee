// Templates of the alert rule pages: the list, the create/edit form and the delete confirmation.
import { OPERATORS, SEVERITIES, type Rule } from '../alerts/rules.js';
import type { LiveSession } from '../auth/sessions.js';
import { MODULES } from '../ingest/modules.js';
import { severityBadge } from './alert-pages.js';
import { html, type Html } from './html.js';
import { layout } from './layout.js';

/** The form's fields as typed, so a refused form comes back exactly as it was sent. */
export interface RuleFormValues {
  metric_name: string; operator: string; threshold: string; clear_threshold: string; for_count: string;
  severity: string; module: string; device_id: string; enabled: boolean;
  /** Create only, admins only: 'global' or 'mine'. */
  scope: string;
}

export const EMPTY_RULE_FORM: RuleFormValues = {
  metric_name: '', operator: '>', threshold: '', clear_threshold: '', for_count: '1', severity: 'warning',
  module: '', device_id: '', enabled: true, scope: 'mine',
};

export function ruleFormValues(r: Rule): RuleFormValues {
  const text = (v: number | null) => (v === null ? '' : String(v));
  return {
    metric_name: r.metric_name, operator: r.operator, threshold: String(r.threshold), clear_threshold: text(r.clear_threshold),
    for_count: String(r.for_count), severity: r.severity, module: r.module ?? '', device_id: text(r.device_id),
    enabled: r.enabled, scope: r.owner_id === null ? 'global' : 'mine',
  };
}

/** Whether the user may change or delete the rule: an admin any, a user only their own. */
export const canManage = (session: LiveSession, r: Rule): boolean =>
  session.user.role === 'admin' || r.owner_id === session.user.id;

const condition = (r: Rule): string =>
  `${r.metric_name} ${r.operator} ${r.threshold}` + (r.clear_threshold === null ? '' : ` (clears at ${r.clear_threshold})`);

function ruleRow(session: LiveSession, r: Rule): Html {
  const actions = canManage(session, r)
    ? html`<a href="/rules/${r.id}/edit">Edit</a> <a href="/rules/${r.id}/delete">Delete</a>`
    : html`<span class="muted">read-only</span>`;
  return html`<tr data-rule-id="${r.id}"${r.enabled ? '' : html` class="disabled"`}>
<td data-label="Id">${r.id}</td>
<td data-label="Condition"><code>${condition(r)}</code></td>
<td data-label="For">${r.for_count}×</td>
<td data-label="Severity">${severityBadge(r.severity)}</td>
<td data-label="Module">${r.module ?? 'any'}</td>
<td data-label="Device">${r.device_id ?? 'any'}</td>
<td data-label="Owner">${r.owner_id === null ? html`<span class="badge">global</span>` : r.owner}</td>
<td data-label="Enabled">${r.enabled ? 'yes' : 'no'}</td>
<td data-label="Actions" class="actions">${actions}</td>
</tr>
`;
}

export function rulesPage(session: LiveSession, rules: readonly Rule[]): string {
  return layout('Alert rules', html`<header><h1>Alert rules</h1><a class="button" href="/rules/new">New rule</a></header>
<p>An alert opens when a reading meets a rule's condition for the given number of consecutive readings.
Global rules apply to every user's devices${session.user.role === 'admin' ? '' : ' and only an admin may change them'}.</p>
<div class="table-wrap">
<table id="rules" class="stack">
<thead><tr><th>Id</th><th>Condition</th><th>For</th><th>Severity</th><th>Module</th><th>Device</th><th>Owner</th><th>Enabled</th><th></th></tr></thead>
<tbody>
${rules.map((r) => ruleRow(session, r))}</tbody>
</table>
</div>`, { session, active: '/rules' });
}

function options(values: readonly string[], selected: string, labels: Record<string, string> = {}): Html[] {
  return values.map((v) => html`<option value="${v}"${v === selected ? html` selected` : ''}>${labels[v] ?? v}</option>`);
}

/** The create (ruleId null) or edit form; `message` is the reason a submitted form was refused. */
export function ruleFormPage(session: LiveSession, ruleId: number | null, v: RuleFormValues, message = ''): string {
  const title = ruleId === null ? 'New alert rule' : `Edit rule ${ruleId}`;
  const admin = session.user.role === 'admin';
  return layout(title, html`<h1>${title}</h1>
${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="${ruleId === null ? '/rules' : `/rules/${ruleId}`}" class="rule-form">
<input type="hidden" name="_csrf" value="${session.csrfToken}">
<label for="metric_name">Metric name</label>
<input id="metric_name" name="metric_name" type="text" required maxlength="64" value="${v.metric_name}" placeholder="heart_rate">
<label for="operator">Operator</label>
<select id="operator" name="operator">${options(OPERATORS, v.operator)}</select>
<label for="threshold">Threshold</label>
<input id="threshold" name="threshold" type="text" inputmode="decimal" required value="${v.threshold}">
<label for="clear_threshold">Clear threshold (optional; only with &gt; &gt;= &lt; &lt;=)</label>
<input id="clear_threshold" name="clear_threshold" type="text" inputmode="decimal" value="${v.clear_threshold}">
<label for="for_count">Consecutive readings before it opens</label>
<input id="for_count" name="for_count" type="number" min="1" step="1" value="${v.for_count}">
<label for="severity">Severity</label>
<select id="severity" name="severity">${options(SEVERITIES, v.severity)}</select>
<label for="module">Module (optional)</label>
<select id="module" name="module">${options(['', ...MODULES], v.module, { '': 'any module' })}</select>
<label for="device_id">Device id (optional)</label>
<input id="device_id" name="device_id" type="text" inputmode="numeric" value="${v.device_id}">
${admin && ruleId === null ? html`<label for="scope">Applies to</label>
<select id="scope" name="scope">${options(['mine', 'global'], v.scope, { mine: 'my devices (my rule)', global: 'every user (global rule)' })}</select>` : ''}
<label class="check"><input type="checkbox" name="enabled" value="1"${v.enabled ? html` checked` : ''}> Enabled</label>
<button type="submit">${ruleId === null ? 'Create rule' : 'Save rule'}</button>
</form>
<p><a href="/rules">Back to the rules</a></p>`, { session, active: '/rules' });
}

export function deleteRulePage(session: LiveSession, r: Rule): string {
  return layout(`Delete rule ${r.id}`, html`<h1>Delete rule ${r.id}?</h1>
<p><code>${condition(r)}</code>, ${r.severity}${r.owner_id === null ? ', global' : ''}.</p>
<p>Deleting a rule also deletes every alert it opened. To keep them, disable the rule instead.</p>
<form method="post" action="/rules/${r.id}/delete">
<input type="hidden" name="_csrf" value="${session.csrfToken}">
<button type="submit" class="danger">Delete rule ${r.id}</button>
</form>
<p><a href="/rules">Cancel</a></p>`, { session, active: '/rules' });
}

export function forbiddenPage(session: LiveSession, text: string, back: string): string {
  return layout('Not allowed', html`<h1>Not allowed</h1>
<p>${text}</p>
<p><a href="${back}">Back</a></p>`, { session });
}
