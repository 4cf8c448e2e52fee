import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

describe('ingest smoke', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService(); });
  afterAll(async () => { await t?.close(); });

  it('stores a flat reading and answers 200 after commit', async () => {
    const d = await t.newDevice();
    const r = await t.post('/api/telemetry-ingest', { data: { heart_rate: 70 } }, d.token);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, status: 'ok', inserted: 1, skipped: 0, device_id: d.id });
    const rows = await t.db.query('SELECT metric_value FROM telemetry WHERE device_id = $1', [d.id]);
    expect(rows.rows).toEqual([{ metric_value: 70 }]);
  });
});
