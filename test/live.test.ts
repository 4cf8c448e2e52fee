import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../dist/src/auth/users.js';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { startTestService, type TestService } from './support/service.js';
import { logIn } from './support/web-client.js';
import { connectLive as connect } from './support/live-client.js';

const until = async (check: () => boolean, ms = 3000) => {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error('timed out waiting for a live message');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('live updates over the WebSocket', () => {
  let t: TestService;
  let clock = Date.now();
  // Re-checks every 200 ms here (10 s by default): a socket whose login ended must close within that.
  beforeAll(async () => { t = await startTestService({ liveRecheckMs: 200 }, { now: () => clock }); });
  afterAll(async () => { await t?.close(); });
  const wsUrl = () => t.baseUrl.replace('http', 'ws') + '/api/live';

  async function account(email: string) {
    const user = await createUser(t.db, email, 'correct horse battery', 'user');
    const device = await createDevice(t.db, user.id, `${email} pendant`, 'health');
    const token = (await t.post('/api/mobile/login', { email, password: 'correct horse battery' })).json.data.token as string;
    return { user, device, token };
  }

  it("pushes a device's latest values, its alert and its offline status to its owner, and never to another user", async () => {
    const a = await account('live-a@example.com');
    const b = await account('live-b@example.com');
    const ca = await connect(wsUrl(), { Authorization: `Bearer ${a.token}` });
    const cb = await connect(wsUrl(), { Authorization: `Bearer ${b.token}` });
    try {
      await until(() => ca.messages.length > 0 && cb.messages.length > 0);
      expect(ca.messages[0]).toEqual({ type: 'hello', user: { id: a.user.id, email: 'live-a@example.com', role: 'user' } });

      expect((await t.post('/api/telemetry-ingest', { data: { heart_rate: 77 } }, a.device.token)).status).toBe(200);
      await until(() => ca.messages.some((m) => m.type === 'device'));
      expect(ca.messages.find((m) => m.type === 'device')).toMatchObject({
        device_id: a.device.id, status: 'online', latest: { heart_rate: { value: 77, unit: null } },
      });

      expect((await t.post('/api/telemetry-ingest', { data: { fall_detected: 1 } }, a.device.token)).status).toBe(200);
      await until(() => ca.messages.some((m) => m.type === 'alert_opened'));
      const opened = ca.messages.find((m) => m.type === 'alert_opened');
      const stored = (await t.db.query('SELECT id FROM alerts WHERE device_id = $1', [a.device.id])).rows[0];
      expect(opened).toMatchObject({ alert_id: stored.id, device_id: a.device.id, metric_name: 'fall_detected', value: 1, severity: 'critical' });
      expect(opened).not.toHaveProperty('owner_id');

      clock += 301_000;
      expect(await t.service.sweepOnce!()).toBeGreaterThanOrEqual(1);
      await until(() => ca.messages.some((m) => m.type === 'device' && m.status === 'offline'));

      await new Promise((r) => setTimeout(r, 200));
      expect(cb.messages.map((m) => m.type)).toEqual(['hello']);
    } finally {
      ca.ws.close();
      cb.ws.close();
    }
  });

  it('refuses a connection without credentials, with an unknown or a logged-out token, or from another origin with a live cookie', async () => {
    await expect(connect(wsUrl(), {})).rejects.toThrow(/refused with 401/);
    await expect(connect(wsUrl(), { Authorization: `Bearer ${'a'.repeat(64)}` })).rejects.toThrow(/refused with 401/);
    const r = await account('live-revoked@example.com');
    expect((await t.post('/api/mobile/logout', {}, r.token)).status).toBe(200);
    await expect(connect(wsUrl(), { Authorization: `Bearer ${r.token}` })).rejects.toThrow(/refused with 401/);
    const session = await logIn(t.baseUrl, 'live-revoked@example.com', 'correct horse battery');
    await expect(connect(wsUrl(), { Cookie: session.cookie, Origin: 'http://evil.example' })).rejects.toThrow(/refused with 401/);
    const ok = await connect(wsUrl(), { Cookie: session.cookie, Origin: t.baseUrl });
    ok.ws.close();
  });

  it('closes a socket at once when its mobile token logs out or its browser session logs out', async () => {
    const u = await account('live-logout@example.com');
    const mobile = await connect(wsUrl(), { Authorization: `Bearer ${u.token}` });
    const session = await logIn(t.baseUrl, 'live-logout@example.com', 'correct horse battery');
    const browser = await connect(wsUrl(), { Cookie: session.cookie, Origin: t.baseUrl });
    await until(() => mobile.messages.length > 0 && browser.messages.length > 0);
    expect((await t.post('/api/mobile/logout', {}, u.token)).status).toBe(200);
    expect((await mobile.closed).code).toBe(4001);
    const form = new URLSearchParams({ _csrf: session.csrf }).toString();
    const out = await fetch(`${t.baseUrl}/logout`, { method: 'POST', redirect: 'manual', body: form,
      headers: { Cookie: session.cookie, Origin: t.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(out.status).toBe(303);
    expect((await browser.closed).code).toBe(4001);
  });

  it('closes the sockets of a user disabled elsewhere, and of a user whose role changed, within the re-check interval', async () => {
    const u = await account('live-disabled@example.com');
    const v = await account('live-promoted@example.com');
    const cu = await connect(wsUrl(), { Authorization: `Bearer ${u.token}` });
    const cv = await connect(wsUrl(), { Authorization: `Bearer ${v.token}` });
    await until(() => cu.messages.length > 0 && cv.messages.length > 0);
    // Changed straight in the database, as another instance or the CLI would: only the re-check can notice.
    await t.db.query('UPDATE users SET disabled_at = now() WHERE id = $1', [u.user.id]);
    await t.db.query("UPDATE users SET role = 'admin' WHERE id = $1", [v.user.id]);
    const started = Date.now();
    expect((await cu.closed).code).toBe(4001);
    expect((await cv.closed).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(3000);
    // Reconnected, the promoted user now subscribes as an admin.
    const again = await connect(wsUrl(), { Authorization: `Bearer ${v.token}` });
    await until(() => again.messages.length > 0);
    expect(again.messages[0]).toMatchObject({ type: 'hello', user: { id: v.user.id, role: 'admin' } });
    again.ws.close();
  });

  it('keeps a socket open while its login stays valid, without refreshing the session', async () => {
    const u = await account('live-steady@example.com');
    const session = await logIn(t.baseUrl, 'live-steady@example.com', 'correct horse battery');
    const client = await connect(wsUrl(), { Cookie: session.cookie, Origin: t.baseUrl });
    const seen = async () => (await t.db.query('SELECT last_seen_at FROM sessions WHERE user_id = $1', [u.user.id])).rows[0].last_seen_at.getTime();
    const before = await seen();
    clock += 60_000; // a refresh by the re-check would now move last_seen_at a minute on
    await new Promise((r) => setTimeout(r, 700)); // three re-checks
    expect(client.ws.readyState).toBe(client.ws.OPEN);
    expect(await seen()).toBe(before);
    client.ws.close();
  });

  it('accepts a browser session cookie from the same origin and pushes its devices', async () => {
    const c = await account('live-browser@example.com');
    const session = await logIn(t.baseUrl, 'live-browser@example.com', 'correct horse battery');
    const origin = t.baseUrl;
    const client = await connect(wsUrl(), { Cookie: session.cookie, Origin: origin });
    try {
      await until(() => client.messages.length > 0);
      expect(client.messages[0]).toMatchObject({ type: 'hello', user: { id: c.user.id } });
      expect((await t.post('/api/telemetry-ingest', { data: { spo2: 97 } }, c.device.token)).status).toBe(200);
      await until(() => client.messages.some((m) => m.type === 'device' && m.device_id === c.device.id));
    } finally {
      client.ws.close();
    }
    await expect(connect(wsUrl(), { Cookie: session.cookie, Origin: 'http://evil.example' })).rejects.toThrow(/refused with 401/);
  });
});
