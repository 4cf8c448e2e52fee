import { createDevice, deleteDevice, rotateDeviceToken } from '../auth/device-registry.js';
import { UserInputError } from '../auth/users.js';
import type { LiveSession } from '../auth/sessions.js';
import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import { DEFAULT_RANGE, RANGES, deviceDetailPage, type AlertRow, type EventRow, type RangeKey, type Series } from './device-detail-page.js';
import { confirmPage, dashboardPage, deviceNotFoundPage, newDevicePage, tokenPage, type ConfirmAction, type VisibleDevice } from './device-pages.js';
import type { GpsPoint } from './gps-svg.js';
import { GPS_MODULES, unitOf } from './key-metrics.js';
import { OnceForms } from './once-forms.js';
import type { WebReply } from './respond-html.js';
import type { SignedInRequest, WebRouter } from './router.js';
import { parseId } from '../http/params.js';

export interface DeviceRouteDeps {
  pool: Pool;
  /** The clock of "last seen … ago" and of the chart ranges. */
  now?: () => number;
}

// Names a GPS position also travels under as plain readings: the SVG track shows them, a chart would not help.
const POSITION_METRICS = new Set(['lat', 'lng', 'latitude', 'longitude']);
const MAX_CHARTS = 24;
const MAX_TRACK_POINTS = 10_000;

/** The dashboard and the device pages of SPEC §4.3 (issue 5): list, add, detail, rotate token, delete. */
export function registerDeviceRoutes(router: WebRouter, deps: DeviceRouteDeps): void {
  const { pool } = deps;
  const now = deps.now ?? Date.now;
  const onceForms = new OnceForms();
  const scope = (s: LiveSession): [number, boolean] => [s.user.id, s.user.role === 'admin'];
  const notFound = (req: SignedInRequest): WebReply => ({ status: 404, body: deviceNotFoundPage(req.session) });

  /** The device of the URL if this user may see it (owner or admin); anyone else's is simply not found. */
  const visibleDevice = async (req: SignedInRequest): Promise<VisibleDevice | null> => {
    const id = parseId(req.params[0]);
    if (id === null) return null;
    const res = await pool.query<VisibleDevice>(q.listVisibleDevices, [...scope(req.session), id]);
    return res.rows[0] ?? null;
  };
  const origin = (req: SignedInRequest) => `${router.secure ? 'https' : 'http'}://${req.origin.host || 'localhost:8080'}`;

  router.page('/devices', async (req) => {
    const [devices, open] = await Promise.all([
      pool.query<VisibleDevice>(q.listVisibleDevices, [...scope(req.session), null]),
      pool.query<{ device_id: number; n: number }>(q.countUnresolvedAlertsByDevice, scope(req.session)),
    ]);
    const openByDevice = new Map(open.rows.map((r) => [r.device_id, r.n]));
    return { status: 200, body: dashboardPage(req.session, devices.rows, openByDevice, now()) };
  });

  router.page('/devices/new', async (req) => ({ status: 200, body: newDevicePage(req.session, { formId: onceForms.issue() }) }));

  router.action('/devices', async (req) => {
    const name = (req.form.get('name') ?? '').trim();
    const module = req.form.get('module') ?? '';
    const formId = req.form.get('_form');
    // A reload of the token page re-sends this form: no second device, and no token on the page.
    if (!onceForms.claim(formId)) return { status: 303, location: '/devices' };
    try {
      const d = await createDevice(pool, req.session.user.id, name, module);
      // Rendered straight from the POST (no redirect): the token exists in this one response only.
      return { status: 200, body: tokenPage(req.session, { ...d, origin: origin(req), rotated: false }) };
    } catch (err) {
      onceForms.release(formId);
      if (!(err instanceof UserInputError)) throw err;
      return { status: 400, body: newDevicePage(req.session, { formId: formId ?? onceForms.issue(), name, module, message: err.message }) };
    }
  });

  router.page('/devices/:id', async (req) => {
    const device = await visibleDevice(req);
    if (!device) return notFound(req);
    const rangeParam = req.query.get('range') ?? '';
    const range: RangeKey = Object.hasOwn(RANGES, rangeParam) ? (rangeParam as RangeKey) : DEFAULT_RANGE;
    const { ms, bucketS } = RANGES[range];
    // The window ends one bucket ahead: a reading stamped a moment in the future (device clock) still shows.
    const toMs = now() + bucketS * 1000;
    const fromMs = toMs - ms;
    const [buckets, track, events, alerts, open] = await Promise.all([
      pool.query<{ metric_name: string; t: number; avg: number }>(q.telemetryBucketsAllMetrics, [device.id, new Date(fromMs), new Date(toMs), bucketS]),
      pool.query<GpsPoint>(q.recentGpsTrack, [device.id, new Date(fromMs), new Date(toMs), MAX_TRACK_POINTS]),
      pool.query<EventRow>(q.recentModuleEvents, [device.id]),
      pool.query<AlertRow>(q.recentDeviceAlerts, [device.id]),
      pool.query<{ n: number }>(q.countUnresolvedAlerts, [device.id]),
    ]);
    const series = toSeries(buckets.rows, device);
    const gps = track.rows.reverse();
    return {
      status: 200,
      body: deviceDetailPage(req.session, {
        device, openAlerts: open.rows[0].n, range, fromMs, toMs, series,
        gps: GPS_MODULES.has(device.module) || gps.length > 0 ? gps : null,
        events: events.rows, alerts: alerts.rows,
      }, now()),
    };
  });

  const confirm = (action: ConfirmAction) => router.page(`/devices/:id/${action}`, async (req) => {
    const device = await visibleDevice(req);
    return device ? { status: 200, body: confirmPage(req.session, device, action, onceForms.issue()) } : notFound(req);
  });
  confirm('rotate-token');
  confirm('delete');

  router.action('/devices/:id/rotate-token', async (req) => {
    const device = await visibleDevice(req);
    if (!device) return notFound(req);
    // A reload of the new token's page must not rotate again (which would void the token just shown).
    if (!onceForms.claim(req.form.get('_form'))) return { status: 303, location: `/devices/${device.id}` };
    try {
      const { token } = await rotateDeviceToken(pool, device.id);
      return { status: 200, body: tokenPage(req.session, { ...device, token, origin: origin(req), rotated: true }) };
    } catch (err) {
      // Deleted between the look-up and the update.
      if (err instanceof UserInputError) return notFound(req);
      throw err;
    }
  });

  router.action('/devices/:id/delete', async (req) => {
    const device = await visibleDevice(req);
    if (!device) return notFound(req);
    try {
      await deleteDevice(pool, device.id);
    } catch (err) {
      if (!(err instanceof UserInputError)) throw err;
    }
    return { status: 303, location: '/devices' };
  });
}

/** Bucket rows (sorted by metric, then time) into one series per charted metric, with the latest value's unit. */
function toSeries(rows: ReadonlyArray<{ metric_name: string; t: number; avg: number }>, device: VisibleDevice): Series[] {
  const byName = new Map<string, Series>();
  for (const r of rows) {
    if (POSITION_METRICS.has(r.metric_name)) continue;
    let s = byName.get(r.metric_name);
    if (!s) {
      if (byName.size >= MAX_CHARTS) continue;
      s = { name: r.metric_name, unit: unitOf(r.metric_name, device.latest[r.metric_name]?.unit), t: [], avg: [] };
      byName.set(r.metric_name, s);
    }
    s.t.push(r.t);
    s.avg.push(r.avg);
  }
  return [...byName.values()];
}
