import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../dist/src/auth/users.js';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { startTestService, type TestService } from './support/service.js';

describe('mobile flow: login, devices with latest values, logout', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService(); });
  afterAll(async () => { await t?.close(); });

  const get = (path: string, token: string) => t.get(path, token);

  it('logs in, lists own devices with status, last seen and latest values, and logs out', async () => {
    const user = await createUser(t.db, 'nurse@example.com', 'correct horse battery', 'user');
    const device = await createDevice(t.db, user.id, 'ward-3 monitor', 'health');
    expect((await t.post('/api/telemetry-ingest', { data: { heart_rate: 72 }, recorded_at: '2026-11-21 10:00:00' }, device.token)).status).toBe(200);

    const login = await t.post('/api/mobile/login', { email: 'Nurse@Example.com', password: 'correct horse battery' });
    expect(login.status).toBe(200);
    expect(login.json).toEqual({ status: 'ok', data: { token: expect.stringMatching(/^[0-9a-f]{64}$/), user: { id: user.id, email: 'nurse@example.com', role: 'user' } } });
    const token = login.json.data.token as string;

    const list = await get('/api/mobile/devices', token);
    expect(list.status).toBe(200);
    expect(list.headers.get('cache-control')).toBe('no-store');
    expect(list.json.data.devices).toEqual([{
      id: device.id, name: 'ward-3 monitor', module: 'health', status: 'online',
      last_seen_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      latest: { heart_rate: { value: 72, unit: null, recorded_at: '2026-11-21T10:00:00.000Z' } },
    }]);

    expect((await t.post('/api/mobile/logout', {}, token)).status).toBe(200);
    const after = await get('/api/mobile/devices', token);
    expect(after.status).toBe(401);
    expect(after.json).toEqual({ status: 'error', error: 'Invalid or expired access token.' });
  });

  it('answers a wrong password and an unknown email with the same status and body', async () => {
    await createUser(t.db, 'tech@example.com', 'correct horse battery', 'user');
    const wrong = await t.post('/api/mobile/login', { email: 'tech@example.com', password: 'wrong password!' });
    const unknown = await t.post('/api/mobile/login', { email: 'nobody@example.com', password: 'wrong password!' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.text).toBe(wrong.text);
    expect(wrong.json).toEqual({ status: 'error', error: 'Invalid email or password.' });
  });

  it('answers 400 when email or password is missing', async () => {
    for (const body of [{}, { email: 'a@b.c' }, { password: 'x' }, 'not json']) {
      const r = await t.post('/api/mobile/login', body);
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ status: 'error', error: 'email and password are required.' });
    }
  });

  it('answers input PostgreSQL cannot store with a client error, never 5xx', async () => {
    const login = await t.post('/api/mobile/login', { email: 'nurse@example.com\u0000', password: 'correct horse battery' });
    expect(login.status).toBe(401);
    const ok = await t.post('/api/mobile/login', { email: ' nurse@example.com ', password: 'correct horse battery' });
    expect(ok.status).toBe(200);
    const token = ok.json.data.token as string;
    const devices = await get('/api/mobile/devices', token);
    const id = devices.json.data.devices[0].id;
    const bad = await get(`/api/mobile/devices/${id}/telemetry?metric=a%00b`, token);
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ status: 'error', error: 'A parameter holds characters that cannot be stored (a NUL byte or invalid UTF-8).' });
  });
});
