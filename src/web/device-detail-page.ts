import type { LiveSession } from '../auth/sessions.js';
import { statusBadge, lastSeen, type VisibleDevice } from './device-pages.js';
import { gpsSvg, type GpsPoint } from './gps-svg.js';
import { Html, html } from './html.js';
import { formatValue, isoTime, unitOf, utcTime as utc } from './key-metrics.js';
import { layout } from './layout.js';

/** Chart ranges: bucket widths keep each chart at or under ~300 points (1 h / 12 s, 24 h / 5 min, 7 d / 40 min). */
export const RANGES = {
  '1h': { label: '1 h', ms: 3_600_000, bucketS: 12 },
  '24h': { label: '24 h', ms: 86_400_000, bucketS: 300 },
  '7d': { label: '7 d', ms: 7 * 86_400_000, bucketS: 2400 },
} as const;
export type RangeKey = keyof typeof RANGES;
export const DEFAULT_RANGE: RangeKey = '24h';

export interface Series { name: string; unit: string | null; t: number[]; avg: number[] }
export interface EventRow { time: Date; event_type: string; readings: number; detail: Record<string, unknown> | null }
export interface AlertRow { id: number; metric_name: string; value: number; severity: string; status: string; opened_at: Date; resolved_at: Date | null }

export interface DeviceDetail {
  device: VisibleDevice;
  openAlerts: number;
  range: RangeKey;
  fromMs: number;
  toMs: number;
  series: Series[];
  /** null: the device's module has no position and it never sent one. */
  gps: GpsPoint[] | null;
  events: EventRow[];
  alerts: AlertRow[];
}

/**
 * Data for a script as a `<script type="application/json">` block (not executed, so the CSP allows it). `<`, `>`
 * and `&` become JSON escapes so no value can close the element; the browser reads it back with JSON.parse.
 */
function jsonBlock(id: string, value: unknown): Html {
  const json = JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return new Html(`<script type="application/json" id="${id}">${json}</script>`);
}

function latestTable(d: VisibleDevice): Html {
  const names = Object.keys(d.latest).sort();
  const rows = names.map((n) => {
    const v = d.latest[n];
    const unit = unitOf(n, v.unit);
    return html`<tr data-metric="${n}"${unit ? html` data-unit="${unit}"` : ''}><td>${n}</td><td class="metric-value">${formatValue(v.value, unit)}</td><td><time datetime="${v.recorded_at}">${utc(v.recorded_at)}</time></td></tr>\n`;
  });
  return html`<div class="table-wrap"><table id="latest">
<thead><tr><th>Metric</th><th>Latest value</th><th>Recorded at</th></tr></thead>
<tbody>
${rows}</tbody>
</table></div>${names.length === 0 ? html`<p class="muted" id="no-latest">No readings yet.</p>` : ''}`;
}

function rangeLinks(d: DeviceDetail): Html {
  const links = (Object.keys(RANGES) as RangeKey[]).map((k) =>
    html`<a href="/devices/${d.device.id}?range=${k}"${k === d.range ? html` aria-current="page"` : ''}>${RANGES[k].label}</a>`);
  return html`<nav class="ranges" aria-label="Chart range">${links}</nav>`;
}

function charts(d: DeviceDetail): Html {
  if (d.series.length === 0) return html`<p class="muted">No readings in this range.</p>`;
  const figures = d.series.map((s) => html`<figure class="chart" data-metric="${s.name}">
<figcaption>${s.name}${s.unit ? html` (${s.unit})` : ''} <span class="muted">average per ${bucketLabel(RANGES[d.range].bucketS)}</span></figcaption>
<div class="plot"></div>
</figure>
`);
  return html`<div class="charts">
${figures}</div>`;
}

function bucketLabel(s: number): string {
  return s < 60 ? `${s} s` : s < 3600 ? `${s / 60} min` : `${s / 3600} h`;
}


/** "skipped=2, metric_name=heart_rate": an event's JSON detail as plain text (escaped by the template). */
function detailText(detail: Record<string, unknown> | null): string {
  if (!detail) return '';
  return Object.entries(detail).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(', ');
}

function eventsTable(events: readonly EventRow[]): Html {
  if (events.length === 0) return html`<p class="muted">No events yet.</p>`;
  const rows = events.map((e) => html`<tr><td><time datetime="${isoTime(e.time)}">${utc(e.time)}</time></td><td>${e.event_type}</td><td>${e.readings > 0 ? `${e.readings} readings` : ''}${e.readings > 0 && e.detail ? '; ' : ''}${detailText(e.detail)}</td></tr>\n`);
  return html`<div class="table-wrap"><table id="events">
<thead><tr><th>Time</th><th>Type</th><th>Detail</th></tr></thead>
<tbody>
${rows}</tbody>
</table></div>`;
}

function alertsTable(alerts: readonly AlertRow[]): Html {
  const rows = alerts.map((a) => html`<tr data-alert-id="${a.id}"><td><time datetime="${isoTime(a.opened_at)}">${utc(a.opened_at)}</time></td><td>${a.metric_name}</td><td>${formatValue(a.value, null)}</td><td><span class="badge ${a.severity}">${a.severity}</span></td><td data-field="alert-status">${a.status}${a.resolved_at ? ` (${utc(a.resolved_at)})` : ''}</td></tr>\n`);
  return html`<div class="table-wrap"><table id="alerts">
<thead><tr><th>Opened</th><th>Metric</th><th>Value</th><th>Severity</th><th>Status</th></tr></thead>
<tbody>
${rows}</tbody>
</table></div>${alerts.length === 0 ? html`<p class="muted" id="no-alerts">No alerts.</p>` : ''}`;
}

export function deviceDetailPage(session: LiveSession, d: DeviceDetail, nowMs: number): string {
  const dev = d.device;
  const chartData = { range: d.range, from: d.fromMs / 1000, to: d.toMs / 1000, bucket_s: RANGES[d.range].bucketS, series: d.series };
  return layout(dev.name, html`<header class="device-head" id="device" data-device-id="${dev.id}">
<h1>${dev.name}</h1>
</header>
<p class="summary">${dev.module} · ${statusBadge(dev.status)} · last seen ${lastSeen(dev.last_seen_at, nowMs)} · open alerts: <strong data-field="open-alerts">${d.openAlerts}</strong></p>
<h2>Latest values</h2>
${latestTable(dev)}
<h2>Charts</h2>
${rangeLinks(d)}
${charts(d)}
${jsonBlock('chart-data', chartData)}
${d.gps ? html`<h2>GPS track (${RANGES[d.range].label})</h2>
${gpsSvg(d.gps)}` : ''}
<h2>Alerts</h2>
${alertsTable(d.alerts)}
<h2>Recent events</h2>
${eventsTable(d.events)}
<h2>Manage</h2>
<p class="actions"><a class="button" href="/devices/${dev.id}/rotate-token" id="rotate-link">Rotate token</a>
<a class="button danger" href="/devices/${dev.id}/delete" id="delete-link">Delete device</a></p>`,
  { session, active: '/devices', scripts: ['live.js', 'format.js', 'uPlot.iife.min.js', 'device.js'], styles: ['uPlot.min.css'] });
}
