import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../dist/src/auth/users.js';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { startTestService, type TestService } from './support/service.js';

describe('alert flow: a fall opens a critical alert, acknowledging it, and the all-clear resolves it', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService(); });
  afterAll(async () => { await t?.close(); });

  const get = (path: string, token: string) => t.get(path, token);

  it('opens, shows, acknowledges and resolves the alert, each step stored at the 200', async () => {
    const user = await createUser(t.db, 'carer@example.com', 'correct horse battery', 'user');
    const other = await createUser(t.db, 'other@example.com', 'correct horse battery', 'user');
    const device = await createDevice(t.db, user.id, 'pendant', 'health');
    const token = (await t.post('/api/mobile/login', { email: 'carer@example.com', password: 'correct horse battery' })).json.data.token;
    const otherToken = (await t.post('/api/mobile/login', { email: 'other@example.com', password: 'correct horse battery' })).json.data.token;
    void other;

    expect((await t.post('/api/telemetry-ingest', { data: { fall_detected: 1 } }, device.token)).status).toBe(200);
    const stored = await t.db.query("SELECT id, status, severity, metric_name, value FROM alerts WHERE device_id = $1", [device.id]);
    expect(stored.rows).toEqual([{ id: expect.any(Number), status: 'open', severity: 'critical', metric_name: 'fall_detected', value: 1 }]);
    const alertId = stored.rows[0].id;

    const listed = await get('/api/mobile/alerts?status=open', token);
    expect(listed.json.data.alerts).toEqual([expect.objectContaining({ id: alertId, device_id: device.id, status: 'open', severity: 'critical' })]);
    expect((await get(`/api/mobile/devices/${device.id}`, token)).json.data.device.open_alerts).toBe(1);
    expect((await get('/api/mobile/alerts', otherToken)).json.data.alerts).toEqual([]);

    // A second fall while the alert is unresolved opens no second alert.
    expect((await t.post('/api/telemetry-ingest', { data: { fall_detected: 1 } }, device.token)).status).toBe(200);
    expect((await t.db.query('SELECT count(*)::int AS n FROM alerts WHERE device_id = $1', [device.id])).rows[0].n).toBe(1);

    const foreign = await t.post(`/api/mobile/alerts/${alertId}/acknowledge`, {}, otherToken);
    expect(foreign.status).toBe(404);
    const ack = await t.post(`/api/mobile/alerts/${alertId}/acknowledge`, {}, token);
    expect(ack.status).toBe(200);
    expect(ack.json.data.alert).toMatchObject({ id: alertId, status: 'acknowledged', acknowledged_by: user.id });
    expect((await t.post(`/api/mobile/alerts/${alertId}/acknowledge`, {}, token)).status).toBe(409);

    expect((await t.post('/api/telemetry-ingest', { data: { fall_detected: 0 } }, device.token)).status).toBe(200);
    const resolved = await t.db.query('SELECT status, resolved_at FROM alerts WHERE id = $1', [alertId]);
    expect(resolved.rows[0]).toEqual({ status: 'resolved', resolved_at: expect.any(Date) });
    const events = await t.db.query("SELECT event_type FROM module_events WHERE device_id = $1 AND event_type LIKE 'alert_%' ORDER BY time", [device.id]);
    expect(events.rows.map((r) => r.event_type)).toEqual(['alert_opened', 'alert_resolved']);
    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^alerts_opened_total 1$/m);
  });
});
