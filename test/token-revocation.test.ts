import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteDevice, rotateDeviceToken } from '../dist/src/auth/device-registry.js';
import { startTestService, type TestService } from './support/service.js';

// Revocation is at once even for a request that passed the token check before the change: its batch
// re-reads the device's token under the row lock and leaves the request out (401, nothing stored).
describe('token revocation while a request waits for its batch', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService({ batchMaxWaitMs: 400 }); });
  afterAll(async () => { await t?.close(); });

  const count = async (id: number) =>
    (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM telemetry WHERE device_id = $1', [id])).rows[0].n;

  it('refuses a queued request whose token is rotated before its batch commits, and keeps its batch-mates', async () => {
    const victim = await t.newDevice();
    const bystander = await t.newDevice();
    expect((await t.post('/api/telemetry-ingest', { data: { warmup: 1 } }, victim.token)).status).toBe(200);
    const queued = t.post('/api/telemetry-ingest', { data: { heart_rate: 81 } }, victim.token);
    const mate = t.post('/api/telemetry-ingest', { data: { heart_rate: 82 } }, bystander.token);
    await new Promise((r) => setTimeout(r, 100)); // both now wait in the batcher
    await rotateDeviceToken(t.db, victim.id);
    const [q, m] = await Promise.all([queued, mate]);
    expect(q.status).toBe(401);
    expect(q.json).toEqual({ error: 'Invalid device token.' });
    expect(m.status).toBe(200);
    expect(await count(victim.id)).toBe(1); // only the warm-up
    expect(await count(bystander.id)).toBe(1);
    const events = await t.db.query('SELECT event_type FROM module_events WHERE device_id = $1 ORDER BY time', [victim.id]);
    expect(events.rows.map((r) => r.event_type)).toEqual(['telemetry', 'online']);
  });

  it('refuses a queued heartbeat of a device deleted before its batch commits', async () => {
    const d = await t.newDevice();
    expect((await t.post('/api/webhooks/heartbeat', '', d.token)).status).toBe(200);
    const queued = t.post('/api/webhooks/heartbeat', '', d.token);
    await new Promise((r) => setTimeout(r, 100));
    await deleteDevice(t.db, d.id);
    expect((await queued).status).toBe(401);
    const events = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM module_events WHERE device_id = $1 AND event_type = 'heartbeat'", [d.id]);
    expect(events.rows[0].n).toBe(1);
  });
});
