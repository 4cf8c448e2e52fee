import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

describe('/readyz', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService(); });
  afterAll(async () => { await t?.close(); });

  it('answers 503 naming migrations while a migration is not recorded, and 200 again once it is', async () => {
    const saved = (await t.db.query('DELETE FROM schema_migrations WHERE version = 2 RETURNING version, name, variant')).rows[0];
    const down = await fetch(`${t.baseUrl}/readyz`);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('1');
    expect(await down.json()).toEqual({ status: 'not ready', failing: ['migrations'] });
    await t.db.query('INSERT INTO schema_migrations (version, name, variant) VALUES ($1, $2, $3)', [saved.version, saved.name, saved.variant]);
    const up = await fetch(`${t.baseUrl}/readyz`);
    expect(up.status).toBe(200);
    expect(await up.json()).toEqual({ status: 'ready' });
  });

  it('keeps /healthz at 200 while not ready: the process is alive', async () => {
    await t.db.query('UPDATE schema_migrations SET version = -version WHERE version = 1');
    try {
      expect((await fetch(`${t.baseUrl}/readyz`)).status).toBe(503);
      expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      await t.db.query('UPDATE schema_migrations SET version = -version WHERE version = -1');
    }
  });

  it('answers HEAD probes with the same status and no body', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const res = await fetch(`${t.baseUrl}${path}`, { method: 'HEAD' });
      expect(res.status, path).toBe(200);
      expect(await res.text()).toBe('');
    }
  });

  it('refuses to start a second instance on a port that is in use', async () => {
    const port = t.service.port;
    await expect(startTestService({ port })).rejects.toThrow(new RegExp(`PORT ${port} on 127.0.0.1 is already in use`));
  });
});
