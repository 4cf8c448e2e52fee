// The dashboard's alerts pages over real HTTP: the list by status, acknowledging and resolving by hand (stored
// columns, the alert_resolved module event, the live push), and what is refused: another user's alert, a
// second step on a finished alert, and a form without its CSRF token. Every step reads the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { startTestService, type TestService } from './support/service.js';
import { get, logIn, postForm, type LoggedIn, type WebResponse } from './support/web-client.js';

const PASSWORD = 'correct horse battery';
const INGEST = '/api/telemetry-ingest';

const rowIds = (page: string) => [...page.matchAll(/<tr data-alert-id="(\d+)"/g)].map((m) => Number(m[1]));

describe('dashboard alerts: list, acknowledge and resolve', () => {
  let t: TestService;
  let clock = Date.parse('2026-04-01T09:00:00Z');
  let alice: LoggedIn;
  let bob: LoggedIn;
  let admin: LoggedIn;
  let aliceId: number;
  let bobId: number;

  beforeAll(async () => {
    t = await startTestService({}, { now: () => clock });
    aliceId = (await createUser(t.db, 'alice@example.com', PASSWORD, 'user')).id;
    bobId = (await createUser(t.db, 'bob@example.com', PASSWORD, 'user')).id;
    alice = await logIn(t.baseUrl, 'alice@example.com', PASSWORD);
    bob = await logIn(t.baseUrl, 'bob@example.com', PASSWORD);
    admin = await logIn(t.baseUrl, 'admin@test.local', 'test-admin-password');
  });
  afterAll(async () => { await t?.close(); });

  /** A new device of the owner with one open fall alert (the default global rule); returns both ids. */
  async function openAlert(ownerId: number, name = `pendant-${clock}`): Promise<{ deviceId: number; alertId: number; token: string }> {
    const d = await createDevice(t.db, ownerId, name, 'health');
    clock += 1000;
    expect((await t.post(INGEST, { data: { fall_detected: 1 } }, d.token)).status).toBe(200);
    const row = (await t.db.query("SELECT id FROM alerts WHERE device_id = $1 AND status = 'open'", [d.id])).rows[0];
    return { deviceId: d.id, alertId: Number(row.id), token: d.token };
  }
  const alertRow = async (id: number) => (await t.db.query(
    'SELECT status, acknowledged_at, acknowledged_by, resolved_at FROM alerts WHERE id = $1', [id])).rows[0];
  const resolvedEvents = async (deviceId: number) => (await t.db.query(
    "SELECT time, module, detail FROM module_events WHERE device_id = $1 AND event_type = 'alert_resolved' ORDER BY time", [deviceId])).rows;
  const act = (s: LoggedIn, id: number, verb: 'acknowledge' | 'resolve', form: Record<string, string> = { _csrf: s.csrf }) =>
    postForm(`${t.baseUrl}/alerts/${id}/${verb}`, form, { cookie: s.cookie });
  const page = async (s: LoggedIn, query = '') => {
    const r = await get(`${t.baseUrl}/alerts${query}`, { cookie: s.cookie });
    expect(r.status).toBe(200);
    return r.text;
  };

  it('lists the unresolved alerts of the own devices by default, filters by status, and shows an admin every alert', async () => {
    const open = await openAlert(aliceId, 'kitchen <pendant> & co');
    const acked = await openAlert(aliceId);
    const resolved = await openAlert(aliceId);
    const bobs = await openAlert(bobId, 'bobs-pendant');
    await t.db.query("UPDATE alerts SET status = 'acknowledged', acknowledged_at = now(), acknowledged_by = $2 WHERE id = $1", [acked.alertId, aliceId]);
    await t.db.query("UPDATE alerts SET status = 'resolved', resolved_at = now() WHERE id = $1", [resolved.alertId]);

    const unresolved = await page(alice);
    expect(rowIds(unresolved)).toEqual([acked.alertId, open.alertId]); // newest first
    expect(unresolved).toContain('kitchen &lt;pendant&gt; &amp; co');
    expect(unresolved).not.toContain('<pendant>');
    expect(unresolved).toContain('by alice@example.com');
    expect(unresolved).not.toContain('bobs-pendant');
    expect(rowIds(await page(alice, '?status=open'))).toEqual([open.alertId]);
    expect(rowIds(await page(alice, '?status=acknowledged'))).toEqual([acked.alertId]);
    expect(rowIds(await page(alice, '?status=resolved'))).toEqual([resolved.alertId]);
    expect(rowIds(await page(alice, '?status=all'))).toEqual([resolved.alertId, acked.alertId, open.alertId]);
    expect(rowIds(await page(admin, '?status=all'))).toEqual([bobs.alertId, resolved.alertId, acked.alertId, open.alertId]);
    expect((await get(`${t.baseUrl}/alerts?status=closed`, { cookie: alice.cookie })).status).toBe(400);
    // Only an open alert has an Acknowledge button; only an unresolved one has Resolve.
    expect(unresolved).toContain(`action="/alerts/${open.alertId}/acknowledge"`);
    expect(unresolved).not.toContain(`action="/alerts/${acked.alertId}/acknowledge"`);
    expect(unresolved).toContain(`action="/alerts/${acked.alertId}/resolve"`);
  });

  it('acknowledges an open alert with the time and the user, and refuses a second acknowledgement with 409', async () => {
    const a = await openAlert(aliceId);
    clock += 5000;
    const r = await act(alice, a.alertId, 'acknowledge', { _csrf: alice.csrf, back: 'all' });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe('/alerts?status=all');
    expect(await alertRow(a.alertId)).toEqual({ status: 'acknowledged', acknowledged_at: new Date(clock), acknowledged_by: aliceId, resolved_at: null });
    expect(await page(alice, '?status=acknowledged')).toMatch(new RegExp(`data-alert-id="${a.alertId}"[\\s\\S]*by alice@example\\.com`));

    clock += 5000;
    const again = await act(alice, a.alertId, 'acknowledge');
    expect(again.status).toBe(409);
    expect(again.text).toContain('This alert is already acknowledged; only an open alert can be acknowledged.');
    expect((await alertRow(a.alertId)).acknowledged_at).toEqual(new Date(clock - 5000));
  });

  it('resolves by hand: stores the status, the time and an alert_resolved event like the engine\'s, marked manual with who did it', async () => {
    const a = await openAlert(aliceId);
    clock += 7000;
    const r = await act(alice, a.alertId, 'resolve');
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe('/alerts?status=unresolved');
    expect(await alertRow(a.alertId)).toEqual({ status: 'resolved', acknowledged_at: null, acknowledged_by: null, resolved_at: new Date(clock) });
    const alertRuleId = Number((await t.db.query('SELECT rule_id FROM alerts WHERE id = $1', [a.alertId])).rows[0].rule_id);
    expect(await resolvedEvents(a.deviceId)).toEqual([{
      time: new Date(clock), module: 'health',
      detail: { rule_id: alertRuleId, alert_id: a.alertId, metric_name: 'fall_detected', value: 1, manual: true, by: 'alice@example.com' },
    }]);

    // Finished: neither step applies any more, and nothing more is stored.
    const twice = await act(alice, a.alertId, 'resolve');
    expect(twice.status).toBe(409);
    expect(twice.text).toContain('This alert is already resolved');
    const ack = await act(alice, a.alertId, 'acknowledge');
    expect(ack.status).toBe(409);
    expect(ack.text).toContain('This alert is already resolved; only an open alert can be acknowledged.');
    expect(await alertRow(a.alertId)).toMatchObject({ status: 'resolved', acknowledged_by: null, resolved_at: new Date(clock) });
    expect(await resolvedEvents(a.deviceId)).toHaveLength(1);

    // The condition still holds: the next firing reading opens a new alert.
    clock += 1000;
    expect((await t.post(INGEST, { data: { fall_detected: 1 } }, a.token)).status).toBe(200);
    expect((await t.db.query("SELECT count(*)::int AS n FROM alerts WHERE device_id = $1 AND status = 'open'", [a.deviceId])).rows[0].n).toBe(1);
  });

  it('resolves an acknowledged alert, and an admin may resolve any user\'s alert', async () => {
    const a = await openAlert(bobId);
    expect((await act(bob, a.alertId, 'acknowledge')).status).toBe(303);
    clock += 1000;
    expect((await act(admin, a.alertId, 'resolve')).status).toBe(303);
    expect(await alertRow(a.alertId)).toMatchObject({ status: 'resolved', acknowledged_by: bobId, resolved_at: new Date(clock) });
    expect((await resolvedEvents(a.deviceId))[0].detail).toMatchObject({ manual: true, by: 'admin@test.local' });
  });

  it("answers 404 for another user's alert, an unknown id and a malformed id, and changes nothing", async () => {
    const a = await openAlert(bobId);
    const before = await alertRow(a.alertId);
    for (const verb of ['acknowledge', 'resolve'] as const) {
      const r = await act(alice, a.alertId, verb);
      expect(r.status).toBe(404);
      expect(r.text).toContain('Not found');
      expect(r.text).not.toContain('bobs');
    }
    expect((await get(`${t.baseUrl}/alerts/${a.alertId}/row`, { cookie: alice.cookie })).status).toBe(404);
    expect((await act(alice, 999999, 'resolve')).status).toBe(404);
    expect((await act(alice, 0, 'resolve')).status).toBe(404);
    expect((await postForm(`${t.baseUrl}/alerts/1e3/acknowledge`, { _csrf: alice.csrf }, { cookie: alice.cookie })).status).toBe(404);
    expect(await alertRow(a.alertId)).toEqual(before);
    expect(await resolvedEvents(a.deviceId)).toEqual([]);
  });

  it('refuses a step without the CSRF token, with a wrong one, another session\'s, or from another origin, with 403 and nothing changed', async () => {
    const a = await openAlert(aliceId);
    const expectRefused = (r: WebResponse) => {
      expect(r.status).toBe(403);
      expect(r.text).toContain('This form has expired');
      expect(r.text).toContain('Reload the page');
    };
    for (const verb of ['acknowledge', 'resolve'] as const) {
      expectRefused(await act(alice, a.alertId, verb, {}));
      expectRefused(await act(alice, a.alertId, verb, { _csrf: 'x'.repeat(alice.csrf.length) }));
      expectRefused(await act(alice, a.alertId, verb, { _csrf: bob.csrf }));
      expectRefused(await postForm(`${t.baseUrl}/alerts/${a.alertId}/${verb}`, { _csrf: alice.csrf }, { cookie: alice.cookie, origin: 'http://evil.example' }));
    }
    expect(await alertRow(a.alertId)).toEqual({ status: 'open', acknowledged_at: null, acknowledged_by: null, resolved_at: null });
    expect(await resolvedEvents(a.deviceId)).toEqual([]);
    // Not logged in: to the login form.
    const anonymous = await postForm(`${t.baseUrl}/alerts/${a.alertId}/resolve`, { _csrf: alice.csrf });
    expect([anonymous.status, anonymous.headers.location]).toEqual([303, '/login']);
  });

  it('serves one alert as a table row with its buttons and the session\'s CSRF token, for the live page', async () => {
    const a = await openAlert(aliceId, 'row <b>test</b>');
    const r = await get(`${t.baseUrl}/alerts/${a.alertId}/row?back=all`, { cookie: alice.cookie });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.text.trim()).toMatch(new RegExp(`^<tr data-alert-id="${a.alertId}" data-status="open"[\\s\\S]*</tr>$`));
    expect(r.text).toContain('row &lt;b&gt;test&lt;/b&gt;');
    expect(r.text).toContain(`<input type="hidden" name="_csrf" value="${alice.csrf}">`);
    expect(r.text).toContain('<input type="hidden" name="back" value="all">');
    expect((await get(`${t.baseUrl}/alerts/${a.alertId}/row`)).status).toBe(303);
  });

  it('stores one alert_resolved event per alert when a resolution by hand races the engine\'s clearing reading', async () => {
    const opened = [];
    for (let i = 0; i < 8; i++) opened.push(await openAlert(aliceId));
    clock += 1000;
    const answers = await Promise.all(opened.flatMap((a) => [
      act(alice, a.alertId, 'resolve').then((r) => r.status),
      t.post(INGEST, { data: { fall_detected: 0 } }, a.token).then((r) => r.status),
    ]));
    // Each resolution by hand either won (303) or found the alert already resolved by the engine (409).
    expect(answers.every((s) => [200, 303, 409].includes(s))).toBe(true);
    for (const a of opened) {
      expect((await alertRow(a.alertId)).status).toBe('resolved');
      expect(await resolvedEvents(a.deviceId)).toHaveLength(1);
    }
  });

  it('pushes a resolution by hand over /api/live to the owner, and the mobile acknowledge still shares the same rules', async () => {
    const a = await openAlert(aliceId);
    const token = (await t.post('/api/mobile/login', { email: 'alice@example.com', password: PASSWORD })).json.data.token as string;
    const ws = new WebSocket(t.baseUrl.replace('http', 'ws') + '/api/live', { headers: { Authorization: `Bearer ${token}` } });
    const messages: any[] = [];
    ws.on('message', (d) => messages.push(JSON.parse(String(d))));
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    try {
      const until = async (check: () => boolean) => {
        for (let i = 0; !check(); i++) { if (i > 150) throw new Error('no live message'); await new Promise((r) => setTimeout(r, 20)); }
      };
      await until(() => messages.some((m) => m.type === 'hello'));
      expect((await t.post(`/api/mobile/alerts/${a.alertId}/acknowledge`, {}, token)).json.data.alert).toMatchObject({ id: a.alertId, status: 'acknowledged', acknowledged_by: aliceId });
      expect((await t.post(`/api/mobile/alerts/${a.alertId}/acknowledge`, {}, token)).status).toBe(409);
      clock += 1000;
      expect((await act(alice, a.alertId, 'resolve')).status).toBe(303);
      await until(() => messages.some((m) => m.type === 'alert_resolved'));
      expect(messages.find((m) => m.type === 'alert_resolved')).toEqual({
        type: 'alert_resolved', alert_id: a.alertId, rule_id: expect.any(Number), device_id: a.deviceId,
        metric_name: 'fall_detected', value: 1, at: new Date(clock).toISOString(),
      });
    } finally {
      ws.close();
    }
  });
});
