// Issue 4's acceptance, end to end on one running service: a fall opens an alert that the mobile API lists, a
// WebSocket client sees and a webhook receiver gets with a verifiable signature; the all-clear resolves it
// everywhere; a device that stops reporting goes offline after its timeout with a module event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../dist/src/alerts/webhook-signature.js';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { connectLive } from './support/live-client.js';
import { startTestService, type TestService } from './support/service.js';
import { waitFor } from './support/wait.js';
import { Receiver } from './support/webhook-receiver.js';

const PASSWORD = 'correct horse battery';

describe('a fall, from ingest to every delivery channel', () => {
  let t: TestService;
  let receiver: Receiver;
  let clock = Date.now();

  beforeAll(async () => {
    t = await startTestService({ webhookPollMs: 50, offlineAfterS: 60 }, { now: () => clock });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('shows the alert in the mobile list, on the WebSocket and at the webhook, resolves it, then marks the device offline', async () => {
    const user = await createUser(t.db, 'nurse@example.com', PASSWORD, 'user');
    const stranger = await createUser(t.db, 'stranger@example.com', PASSWORD, 'user');
    const pendant = await createDevice(t.db, user.id, 'room 4 pendant', 'health');
    const login = async (email: string) => (await t.post('/api/mobile/login', { email, password: PASSWORD })).json.data.token as string;
    const token = await login(user.email);
    const setHook = await fetch(`${t.baseUrl}/api/mobile/webhook`, {
      method: 'PUT', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ url: receiver.url }),
    });
    const { secret } = (await setHook.json()).data.webhook;
    const wsUrl = `${t.baseUrl.replace('http', 'ws')}/api/live`;
    const mine = await connectLive(wsUrl, { Authorization: `Bearer ${token}` });
    const theirs = await connectLive(wsUrl, { Authorization: `Bearer ${await login(stranger.email)}` });

    expect((await t.post('/api/telemetry-ingest', { data: { fall_detected: 1 } }, pendant.token)).status).toBe(200);
    const listed = (await t.get('/api/mobile/alerts', token)).json.data.alerts;
    expect(listed).toEqual([expect.objectContaining({ device_id: pendant.id, metric_name: 'fall_detected', severity: 'critical', status: 'open' })]);
    const alertId = listed[0].id;
    expect(await waitFor(() => mine.messages.some((m) => m.type === 'alert_opened' && m.alert_id === alertId), 3000)).toBe(true);
    expect(await waitFor(() => receiver.of('alert.opened', alertId).length === 1, 3000)).toBe(true);
    const opened = receiver.of('alert.opened', alertId)[0];
    expect(verifyWebhook(secret, opened.headers['x-webhook-timestamp'] as string, opened.headers['x-signature'] as string, opened.body)).toBe(true);

    expect((await t.post('/api/telemetry-ingest', { data: { fall_detected: 0 } }, pendant.token)).status).toBe(200);
    expect((await t.get('/api/mobile/alerts?status=resolved', token)).json.data.alerts.map((a: { id: number }) => a.id)).toEqual([alertId]);
    expect(await waitFor(() => mine.messages.some((m) => m.type === 'alert_resolved' && m.alert_id === alertId), 3000)).toBe(true);
    expect(await waitFor(() => receiver.of('alert.resolved', alertId).length === 1, 3000)).toBe(true);

    // Silent past its 60 s timeout: offline, with a module event, pushed and delivered.
    clock += 61_000;
    expect(await t.service.sweepOnce!()).toBe(1);
    const [device] = (await t.db.query('SELECT status FROM devices WHERE id = $1', [pendant.id])).rows;
    expect(device.status).toBe('offline');
    const events = (await t.db.query("SELECT event_type FROM module_events WHERE device_id = $1 AND event_type = 'offline'", [pendant.id])).rows;
    expect(events).toHaveLength(1);
    expect(await waitFor(() => mine.messages.some((m) => m.type === 'device' && m.status === 'offline' && m.device_id === pendant.id), 3000)).toBe(true);
    expect(await waitFor(() => receiver.deliveries.some((d) => d.json.type === 'device.offline' && d.json.device.id === pendant.id), 3000)).toBe(true);

    // The stranger's socket heard nothing of it.
    expect(theirs.messages.filter((m) => m.type !== 'hello')).toEqual([]);
    mine.ws.close();
    theirs.ws.close();
  });
});
