// Live updates with two instances on one database, as behind a load balancer: a socket on one instance sees
// the readings, alerts and offline sweeps committed by the other, once each, and never another user's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { connectLive } from './support/live-client.js';
import { startTestService, type TestService } from './support/service.js';
import { waitFor } from './support/wait.js';

const PASSWORD = 'correct horse battery';

describe('live updates across two instances', () => {
  let a: TestService;
  let b: TestService;
  let clock = Date.now();
  beforeAll(async () => {
    a = await startTestService({}, { now: () => clock });
    b = await startTestService({}, { now: () => clock, databaseUrl: a.databaseUrl });
  });
  afterAll(async () => { await b?.close(); await a?.close(); });

  it('pushes to a socket on instance B what instance A committed, once, and nothing of another user', async () => {
    const owner = await createUser(a.db, 'relay-owner@example.com', PASSWORD, 'user');
    const other = await createUser(a.db, 'relay-other@example.com', PASSWORD, 'user');
    const device = await createDevice(a.db, owner.id, 'relay pendant', 'health');
    const token = async (email: string) => (await b.post('/api/mobile/login', { email, password: PASSWORD })).json.data.token as string;
    const url = `${b.baseUrl.replace('http', 'ws')}/api/live`;
    const mine = await connectLive(url, { Authorization: `Bearer ${await token(owner.email)}` });
    const theirs = await connectLive(url, { Authorization: `Bearer ${await token(other.email)}` });
    try {
      // Instance A learns within a few seconds that B has subscribers; readings before that reach B's sockets only
      // through B itself.
      let n = 0;
      expect(await waitFor(async () => {
        await a.post('/api/telemetry-ingest', { data: { heart_rate: 60 + (++n % 10) } }, device.token);
        return mine.messages.some((m) => m.type === 'device');
      }, 8000)).toBe(true);

      const before = mine.messages.length;
      expect((await a.post('/api/telemetry-ingest', { data: { spo2: 97.5 } }, device.token)).status).toBe(200);
      expect((await a.post('/api/telemetry-ingest', { data: { fall_detected: 1 } }, device.token)).status).toBe(200);
      expect(await waitFor(() => mine.messages.some((m) => m.type === 'alert_opened' && m.device_id === device.id), 3000)).toBe(true);
      clock += 301_000;
      const swept = (await a.service.sweepOnce!()) ?? (await b.service.sweepOnce!());
      expect(swept).toBeGreaterThanOrEqual(1);
      expect(await waitFor(() => mine.messages.some((m) => m.type === 'device' && m.status === 'offline'), 3000)).toBe(true);
      await new Promise((r) => setTimeout(r, 300));

      const after = mine.messages.slice(before);
      expect(after.filter((m) => m.type === 'device' && m.latest?.spo2?.value === 97.5)).toHaveLength(1);
      expect(after.filter((m) => m.type === 'alert_opened')).toHaveLength(1);
      expect(after.filter((m) => m.type === 'device' && m.status === 'offline')).toHaveLength(1);
      expect(theirs.messages.filter((m) => m.type !== 'hello')).toEqual([]);
    } finally {
      mine.ws.close();
      theirs.ws.close();
    }
  });
});
