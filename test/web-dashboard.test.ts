// The dashboard and device pages over HTTP (issue 5): visibility, escaping, one-time tokens, rotation,
// deletion with CSRF, and the data behind the charts and the GPS track, checked against the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { startTestService, type TestService } from './support/service.js';
import { get, logIn, postForm, type LoggedIn } from './support/web-client.js';

const PASSWORD = 'correct horse battery';
const MIN = 60_000;

/** The row of one device on the dashboard. */
function dashboardRow(page: string, id: number): string {
  const m = new RegExp(`<tr data-device-id="${id}"[\\s\\S]*?</tr>`).exec(page);
  if (!m) throw new Error(`no row for device ${id}`);
  return m[0];
}
const shownToken = (page: string) => /<code id="device-token" class="token">([0-9a-f]{64})<\/code>/.exec(page)?.[1];
const chartData = (page: string) => JSON.parse(/<script type="application\/json" id="chart-data">(.*?)<\/script>/s.exec(page)![1]);

describe('dashboard and device pages', () => {
  let t: TestService;
  let alice: { id: number };
  let bob: { id: number };
  let a: LoggedIn;
  let b: LoggedIn;
  const page = (path: string, s: LoggedIn) => get(`${t.baseUrl}${path}`, { cookie: s.cookie });
  const action = (path: string, s: LoggedIn, form: Record<string, string> = { _csrf: s.csrf }) =>
    postForm(`${t.baseUrl}${path}`, form, { cookie: s.cookie });
  const ingest = (token: string, body: unknown) => t.post('/api/telemetry-ingest', body, token);
  const deviceRow = async (id: number) =>
    (await t.db.query('SELECT owner_id, name, module, api_token_hash, deleted_at FROM devices WHERE id = $1', [id])).rows[0];

  beforeAll(async () => {
    t = await startTestService();
    alice = await createUser(t.db, 'alice@example.com', PASSWORD, 'user');
    bob = await createUser(t.db, 'bob@example.com', PASSWORD, 'user');
    a = await logIn(t.baseUrl, 'alice@example.com', PASSWORD);
    b = await logIn(t.baseUrl, 'bob@example.com', PASSWORD);
  });
  afterAll(async () => { await t?.close(); });

  it("lists only the user's own devices with escaped names, and an admin sees every device", async () => {
    const evil = await createDevice(t.db, alice.id, '<script>alert(1)</script>', 'health');
    const bobs = await createDevice(t.db, bob.id, 'bob-truck', 'vehicle');
    const mine = await page('/devices', a);
    expect(mine.status).toBe(200);
    expect(dashboardRow(mine.text, evil.id)).toContain(`<a href="/devices/${evil.id}">&lt;script&gt;alert(1)&lt;/script&gt;</a>`);
    expect(mine.text).not.toContain('<script>alert(1)');
    expect(mine.text).not.toContain('bob-truck');
    expect(mine.text).not.toContain(`data-device-id="${bobs.id}"`);
    const admin = await logIn(t.baseUrl, 'admin@test.local', 'test-admin-password');
    const all = await page('/devices', admin);
    expect(dashboardRow(all.text, bobs.id)).toContain('bob-truck');
    expect(dashboardRow(all.text, evil.id)).toContain('&lt;script&gt;');
    expect((await page(`/devices/${bobs.id}`, admin)).status).toBe(200);
  });

  it('shows key values, status and the open-alert count per device and in total after a fall_detected:1 reading', async () => {
    const quiet = await createDevice(t.db, alice.id, 'quiet-pendant', 'health');
    const d = await createDevice(t.db, alice.id, 'grandma-pendant', 'health');
    expect(dashboardRow((await page('/devices', a)).text, d.id)).toContain('data-field="open-alerts">0<');
    expect((await ingest(d.token, { data: { heart_rate: 71, spo2: 97.5, fall_detected: 1 } })).status).toBe(200);
    const open = (await t.db.query("SELECT count(*)::int AS n FROM alerts WHERE device_id = $1 AND status = 'open'", [d.id])).rows[0].n;
    expect(open).toBe(1);
    const dash = (await page('/devices', a)).text;
    const row = dashboardRow(dash, d.id);
    expect(row).toContain('<span class="open-alerts has-alerts" data-field="open-alerts">1</span>');
    // The flat body form carries no units: the documented ones are shown.
    expect(row).toMatch(/data-metric="heart_rate" data-unit="bpm" data-at="[^"]+Z">71 bpm</);
    expect(row).toMatch(/data-metric="spo2" data-unit="%" data-at="[^"]+Z">97.5 %</);
    expect(row).toContain('<span class="badge online" data-field="status">online</span>');
    expect(row).toMatch(/<time data-field="last-seen" datetime="\d{4}-\d\d-\d\dT[\d:.]+Z" title="[^"]+">\d+ s ago<\/time>/);
    expect(dashboardRow(dash, quiet.id)).toContain('data-field="open-alerts">0<');
    expect(dashboardRow(dash, quiet.id)).toContain('<time data-field="last-seen">never</time>');
    const total = (await t.db.query(
      "SELECT count(*)::int AS n FROM alerts al JOIN devices d ON d.id = al.device_id WHERE d.owner_id = $1 AND al.status <> 'resolved' AND d.deleted_at IS NULL", [alice.id])).rows[0].n;
    expect(dash).toContain(`<strong id="open-alerts-total">${total}</strong>`);
    expect(total).toBeGreaterThanOrEqual(1);
  });

  it('adds a device through the form and shows its token once, with a curl example whose token ingests', async () => {
    const form = await page('/devices/new', a);
    expect(form.status).toBe(200);
    expect(form.text).toContain('<select id="module" name="module">');
    const created = await action('/devices', a, { _csrf: a.csrf, name: 'van <7>', module: 'vehicle' });
    expect(created.status).toBe(200);
    expect(created.headers['cache-control']).toBe('no-store');
    const token = shownToken(created.text)!;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const stored = await t.db.query('SELECT id, owner_id, module FROM devices WHERE name = $1', ['van <7>']);
    expect(stored.rows).toEqual([{ id: expect.any(Number), owner_id: alice.id, module: 'vehicle' }]);
    const id = stored.rows[0].id as number;
    const host = new URL(t.baseUrl).host;
    expect(created.text).toContain(`curl -X POST http://${host}/api/telemetry-ingest -H &#39;Authorization: Bearer ${token}&#39;`);
    expect(created.text).toContain('&quot;speed_kmh&quot;');
    expect(created.text).toContain('van &lt;7&gt;');
    expect((await ingest(token, { data: { speed_kmh: 54 } })).status).toBe(200);
    for (const path of [`/devices/${id}`, '/devices', `/devices/${id}/rotate-token`, '/devices/new']) {
      const again = await page(path, a);
      expect(again.status).toBe(200);
      expect(again.text).not.toContain(token);
    }
  });

  it('refuses a re-sent add or rotate form (a browser reload): no second device, no second rotation, no token', async () => {
    const formId = (p: string) => /name="_form" value="([A-Za-z0-9_-]{22})"/.exec(p)![1];
    const form = { _csrf: a.csrf, _form: formId((await page('/devices/new', a)).text), name: 'reload-me', module: 'home_infra' };
    const first = await action('/devices', a, form);
    const token = shownToken(first.text)!;
    const again = await action('/devices', a, form);
    expect(again.status).toBe(303);
    expect(again.headers.location).toBe('/devices');
    expect(again.text).not.toContain(token);
    const rows = (await t.db.query('SELECT id FROM devices WHERE name = $1', ['reload-me'])).rows;
    expect(rows).toHaveLength(1);
    const id = rows[0].id as number;

    const rotateForm = { _csrf: a.csrf, _form: formId((await page(`/devices/${id}/rotate-token`, a)).text) };
    const rotated = shownToken((await action(`/devices/${id}/rotate-token`, a, rotateForm)).text)!;
    const hash = (await deviceRow(id)).api_token_hash;
    const repeat = await action(`/devices/${id}/rotate-token`, a, rotateForm);
    expect(repeat.status).toBe(303);
    expect(repeat.headers.location).toBe(`/devices/${id}`);
    expect((await deviceRow(id)).api_token_hash).toBe(hash);
    expect((await ingest(rotated, { data: { power_w: 300 } })).status).toBe(200);
    expect((await ingest(token, { data: { power_w: 300 } })).status).toBe(401);
  });

  it('re-renders the add form with 400 and a message for an empty name or an unknown module, creating nothing', async () => {
    const before = (await t.db.query('SELECT count(*)::int AS n FROM devices')).rows[0].n;
    const noName = await action('/devices', a, { _csrf: a.csrf, name: '  ', module: 'health' });
    expect(noName.status).toBe(400);
    expect(noName.text).toContain('Device name must be 1 to 200 characters.');
    const badModule = await action('/devices', a, { _csrf: a.csrf, name: 'boat', module: 'boat<x>' });
    expect(badModule.status).toBe(400);
    expect(badModule.text).toContain('Module must be one of');
    expect(badModule.text).toContain('value="boat"');
    expect(badModule.text).not.toContain('boat<x>');
    expect((await t.db.query('SELECT count(*)::int AS n FROM devices')).rows[0].n).toBe(before);
  });

  it("answers 404 for another user's device on every page and action, and changes nothing", async () => {
    const d = await createDevice(t.db, bob.id, 'bobs-secret-monitor', 'health');
    const before = await deviceRow(d.id);
    for (const path of [`/devices/${d.id}`, `/devices/${d.id}/rotate-token`, `/devices/${d.id}/delete`, '/devices/99999999', '/devices/abc', '/devices/0']) {
      const r = await page(path, a);
      expect(r.status, path).toBe(404);
      expect(r.text).not.toContain('bobs-secret-monitor');
      expect(r.text).toContain('Device not found');
    }
    for (const path of [`/devices/${d.id}/rotate-token`, `/devices/${d.id}/delete`]) {
      const r = await action(path, a);
      expect(r.status, path).toBe(404);
      expect(r.text).not.toMatch(/[0-9a-f]{64}/);
    }
    expect(await deviceRow(d.id)).toEqual(before);
    expect(before.deleted_at).toBeNull();
    expect((await ingest(d.token, { data: { heart_rate: 60 } })).status).toBe(200);
    expect((await page(`/devices/${d.id}`, b)).status).toBe(200);
  });

  it('rotates a token after a confirmation page: the old token gets 401 at once, the new one 200', async () => {
    const d = await createDevice(t.db, alice.id, 'rotating-pendant', 'health');
    expect((await ingest(d.token, { data: { heart_rate: 70 } })).status).toBe(200);
    const confirm = await page(`/devices/${d.id}/rotate-token`, a);
    expect(confirm.text).toContain(`<form method="post" action="/devices/${d.id}/rotate-token" id="confirm-form">`);
    expect(confirm.text).toContain(`name="_csrf" value="${a.csrf}"`);
    const rotated = await action(`/devices/${d.id}/rotate-token`, a);
    expect(rotated.status).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const token = shownToken(rotated.text)!;
    expect(token).not.toBe(d.token);
    expect((await ingest(d.token, { data: { heart_rate: 71 } })).status).toBe(401);
    expect((await ingest(token, { data: { heart_rate: 72 } })).status).toBe(200);
    expect((await page(`/devices/${d.id}`, a)).text).not.toContain(token);
  });

  it('deletes a device with the session CSRF token, and refuses a missing or wrong token with 403 keeping the device', async () => {
    const d = await createDevice(t.db, alice.id, 'doomed-sensor', 'factory');
    for (const form of [{}, { _csrf: 'x'.repeat(43) }, { _csrf: b.csrf }]) {
      const r = await action(`/devices/${d.id}/delete`, a, form);
      expect(r.status).toBe(403);
      expect(r.text).toContain('This form has expired');
    }
    expect((await deviceRow(d.id)).deleted_at).toBeNull();
    const gone = await action(`/devices/${d.id}/delete`, a);
    expect(gone.status).toBe(303);
    expect(gone.headers.location).toBe('/devices');
    expect((await deviceRow(d.id)).deleted_at).toBeInstanceOf(Date);
    expect((await page(`/devices/${d.id}`, a)).status).toBe(404);
    expect((await page('/devices', a)).text).not.toContain('doomed-sensor');
    expect((await ingest(d.token, { data: { gas_ppm: 3 } })).status).toBe(401);
  });

  it('puts the bucketed averages of posted readings in the chart data and draws a vehicle GPS track as an SVG polyline', async () => {
    const d = await createDevice(t.db, alice.id, 'delivery-van', 'vehicle');
    // A 5-minute bucket boundary 60 to 65 minutes ago: every reading below lies inside the 1 h range too.
    const base = Math.floor(Date.now() / 300_000) * 300_000 - 60 * MIN;
    // The last two readings share a 5-minute bucket (its avg is shown); the others have buckets of their own.
    const readings = [
      { at: base + 10 * MIN, speed: 40, lat: 52.5200, lng: 13.4050 },
      { at: base + 20 * MIN, speed: 60, lat: 52.5210, lng: 13.4100 },
      { at: base + 30 * MIN, speed: 20, lat: 52.5250, lng: 13.4150 },
    ];
    for (const r of readings) {
      expect((await ingest(d.token, { data: { speed_kmh: r.speed }, gps: { lat: r.lat, lng: r.lng }, recorded_at: new Date(r.at).toISOString() })).status).toBe(200);
    }
    expect((await ingest(d.token, { readings: [{ metric_name: 'speed_kmh', metric_value: 30, unit: 'km/h', recorded_at: new Date(base + 31 * MIN).toISOString() }] })).status).toBe(200);

    const detail = await page(`/devices/${d.id}`, a);
    expect(detail.status).toBe(200);
    const data = chartData(detail.text);
    expect(data).toMatchObject({ range: '24h', bucket_s: 300 });
    const speed = data.series.find((s: { name: string }) => s.name === 'speed_kmh');
    expect(speed.avg).toEqual([40, 60, 25]);
    expect(speed.t).toHaveLength(3);
    expect(speed.t.every((x: number) => x % 300 === 0)).toBe(true);
    expect(speed.unit).toBe('km/h');
    expect(detail.text).toContain('<figure class="chart" data-metric="speed_kmh">');
    const polyline = /<polyline class="gps-line" points="([^"]+)">/.exec(detail.text);
    expect(polyline?.[1].split(' ')).toHaveLength(3);
    expect(detail.text).toContain('<circle class="gps-start"');
    expect(detail.text).toContain('<circle class="gps-end"');

    // A unit may hold any printable text: in the JSON block it cannot end the script element.
    expect((await ingest(d.token, { metric_name: 'cargo_door', metric_value: 1, unit: '</script><b>x' })).status).toBe(200);
    const hostile = (await page(`/devices/${d.id}`, a)).text;
    expect(hostile).not.toContain('</script><b>');
    expect(hostile).toContain('\\u003c/script\\u003e\\u003cb\\u003ex');
    expect(chartData(hostile).series.find((s: { name: string }) => s.name === 'cargo_door').unit).toBe('</script><b>x');
    expect(hostile).toContain('1 &lt;/script&gt;&lt;b&gt;x');

    const hour = chartData((await page(`/devices/${d.id}?range=1h`, a)).text);
    expect(hour.bucket_s).toBe(12);
    expect(hour.series.find((s: { name: string }) => s.name === 'speed_kmh').avg).toEqual([40, 60, 20, 30]);
    const week = chartData((await page(`/devices/${d.id}?range=7d`, a)).text);
    expect(week.bucket_s).toBe(2400);
    expect(chartData((await page(`/devices/${d.id}?range=constructor`, a)).text).range).toBe('24h');
  });

  it('lists recent module events and the alerts of a device with their status on its detail page', async () => {
    const d = await createDevice(t.db, alice.id, 'event-pendant', 'health');
    expect((await ingest(d.token, { data: { heart_rate: 70, fall_detected: 1, note: 'x' } })).status).toBe(200);
    expect((await ingest(d.token, { data: { fall_detected: 0 } })).status).toBe(200);
    const detail = (await page(`/devices/${d.id}`, a)).text;
    const alert = (await t.db.query('SELECT id, status FROM alerts WHERE device_id = $1', [d.id])).rows;
    expect(alert).toEqual([{ id: expect.any(Number), status: 'resolved' }]);
    expect(detail).toMatch(new RegExp(`<tr data-alert-id="${alert[0].id}">.*<td>fall_detected</td>.*<td data-field="alert-status">resolved \\(`));
    const events = /<table id="events">[\s\S]*?<\/table>/.exec(detail)![0];
    expect(events).toContain('<td>online</td>');
    expect(events).toContain('<td>alert_opened</td>');
    expect(events).toContain('<td>alert_resolved</td>');
    expect(events).toContain('2 readings; skipped=1');
    expect(detail).toContain('<span class="badge online" data-field="status">online</span>');
  });
});
