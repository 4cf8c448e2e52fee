// The alert lifecycle around the ingest transaction: an alert is committed before the 200, a failed batch opens
// none and counts nothing, for_count state survives a restart, an acknowledged alert still resolves by itself,
// and the mobile list filters by status. Every assertion reads the database or the real HTTP API.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
const DB_UNAVAILABLE = 'The database did not commit this batch; nothing of this request was stored. Retry after the Retry-After seconds.';
const PASSWORD = 'correct horse battery'; // what t.newDevice gives each owner

async function alertsOpenedTotal(t: TestService): Promise<number> {
  const m = /^alerts_opened_total (\d+)$/m.exec(await (await fetch(`${t.baseUrl}/metrics`)).text());
  return m ? Number(m[1]) : 0;
}

describe('alerts and the batch transaction', () => {
  let t: TestService;
  let check: pg.Pool;
  let countRule: number;
  const owner = `lifecycle-${Date.now()}@example.com`;
  // A 200 ms window: requests sent together share one batch, and so share its fate.
  beforeAll(async () => {
    t = await startTestService({ ingestWorkers: 2, batchMaxWaitMs: 200 });
    check = new pg.Pool({ connectionString: t.databaseUrl, max: 10 });
    check.on('error', () => {}); // DROP DATABASE ... WITH (FORCE) ends idle clients: not a test failure
    // Inserted before any batch, so the workers watch its metric from their first batch.
    countRule = (await t.db.query("INSERT INTO alert_rules (metric_name, operator, threshold, for_count) VALUES ('lc_count', '>', 10, 2) RETURNING id")).rows[0].id;
  });
  afterAll(async () => { await check?.end(); await t?.close(); });

  const alertRows = async (deviceId: number) => (await t.db.query('SELECT id, status, acknowledged_by, acknowledged_at, resolved_at FROM alerts WHERE device_id = $1 ORDER BY id', [deviceId])).rows;
  const stateRows = async (deviceId: number) => (await t.db.query('SELECT rule_id, consecutive FROM alert_rule_state WHERE device_id = $1 ORDER BY rule_id', [deviceId])).rows;
  const alertEventCount = async (deviceId: number) => (await t.db.query(
    "SELECT count(*)::int AS n FROM module_events WHERE device_id = $1 AND event_type LIKE 'alert\\_%'", [deviceId])).rows[0].n;

  it('finds the alert and its module event in the database at the moment the ingest 200 arrives, even when commits are slow', async () => {
    // A deferred trigger sleeps inside COMMIT: a 200 sent before the commit finished would find no alert.
    await t.db.query(`CREATE FUNCTION slow_alert_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.05); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER slow_alert_commit AFTER INSERT ON alerts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_alert_commit();`);
    try {
      const first = await t.newDevice('health', owner);
      const devices = [first, ...await Promise.all(Array.from({ length: 5 }, () => t.newDevice('health', owner)))];
      const seen = await Promise.all(devices.map(async (d) => {
        const r = await t.post(INGEST, { data: { fall_detected: 1 } }, d.token);
        // At once, on a connection of our own: no pool queue between the answer and the look.
        const q = await check.query(`SELECT (SELECT count(*)::int FROM alerts WHERE device_id = $1 AND status = 'open') AS alerts,
            (SELECT count(*)::int FROM module_events WHERE device_id = $1 AND event_type = 'alert_opened') AS events`, [d.id]);
        return { status: r.status, ...q.rows[0] };
      }));
      expect(seen).toEqual(Array(devices.length).fill({ status: 200, alerts: 1, events: 1 }));
    } finally {
      await t.db.query('DROP TRIGGER slow_alert_commit ON alerts; DROP FUNCTION slow_alert_commit();');
    }
  });

  it('opens no alert and changes no for_count state when the batch fails in PostgreSQL, and counts no alert', async () => {
    const [fall, counting, bad] = [await t.newDevice('health', owner), await t.newDevice('factory', owner), await t.newDevice('factory', owner)];
    expect((await t.post(INGEST, { metric_name: 'lc_count', metric_value: 11 }, counting.token)).status).toBe(200);
    expect(await stateRows(counting.id)).toEqual([{ rule_id: countRule, consecutive: 1 }]);
    const countedBefore = await alertsOpenedTotal(t);

    // The batch fails at its last step, the latest-values upsert, after the alert engine has run and written
    // its alert, state and module event: all of it must roll back.
    await t.db.query(`CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.value = 13013 THEN RAISE EXCEPTION 'poison reading'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER poison BEFORE INSERT ON latest_metrics FOR EACH ROW EXECUTE FUNCTION poison();`);
    try {
      // Sent at once, well inside the 200 ms window: the fall and the second count share the poison's batch.
      const answers = await Promise.all([
        t.post(INGEST, { data: { fall_detected: 1 } }, fall.token),
        t.post(INGEST, { metric_name: 'lc_count', metric_value: 12 }, counting.token),
        t.post(INGEST, { metric_name: 'bad', metric_value: 13013 }, bad.token),
      ]);
      expect(answers.map((a) => [a.status, a.json])).toEqual(Array(3).fill([503, { error: DB_UNAVAILABLE }]));
      expect({ fall: await alertRows(fall.id), counting: await alertRows(counting.id) }).toEqual({ fall: [], counting: [] });
      expect({ fall: await stateRows(fall.id), counting: await stateRows(counting.id) }).toEqual({ fall: [], counting: [{ rule_id: countRule, consecutive: 1 }] });
      expect(await alertEventCount(fall.id) + await alertEventCount(counting.id)).toBe(0);
      expect(await alertsOpenedTotal(t)).toBe(countedBefore);
    } finally {
      await t.db.query('DROP TRIGGER poison ON latest_metrics; DROP FUNCTION poison();');
    }

    // The same readings, once the database takes them: the fall opens its alert, the count reaches 2 and fires.
    expect((await t.post(INGEST, { data: { fall_detected: 1 } }, fall.token)).status).toBe(200);
    expect((await t.post(INGEST, { metric_name: 'lc_count', metric_value: 12 }, counting.token)).status).toBe(200);
    expect((await alertRows(fall.id)).map((a) => a.status)).toEqual(['open']);
    expect((await alertRows(counting.id)).map((a) => a.status)).toEqual(['open']);
    expect(await stateRows(counting.id)).toEqual([{ rule_id: countRule, consecutive: 2 }]);
    expect(await alertsOpenedTotal(t)).toBe(countedBefore + 2);
  });

  it('resolves an acknowledged alert by itself when the clear condition holds, and the mobile list filters by status', async () => {
    const carer = `carer-${Date.now()}@example.com`;
    const x = await t.newDevice('health', carer);
    const y = await t.newDevice('health', carer);
    const login = await t.post('/api/mobile/login', { email: carer, password: PASSWORD });
    const token = login.json.data.token as string;
    const list = async (query: string) => {
      const res = await fetch(`${t.baseUrl}/api/mobile/alerts${query}`, { headers: { Authorization: `Bearer ${token}` } });
      return { status: res.status, ids: ((await res.json() as any).data?.alerts ?? []).map((a: { id: number }) => a.id) };
    };
    const fall = async (d: { token: string }, value: number) => expect((await t.post(INGEST, { data: { fall_detected: value } }, d.token)).status).toBe(200);

    await fall(x, 1);
    const [first] = await alertRows(x.id);
    expect((await t.post(`/api/mobile/alerts/${first.id}/acknowledge`, {}, token)).status).toBe(200);
    await fall(x, 1); // still firing: the acknowledged alert stays as it is, no second alert
    expect(await alertRows(x.id)).toEqual([{ id: first.id, status: 'acknowledged', acknowledged_by: x.ownerId, acknowledged_at: expect.any(Date), resolved_at: null }]);
    await fall(x, 0);
    expect(await alertRows(x.id)).toEqual([{ id: first.id, status: 'resolved', acknowledged_by: x.ownerId, acknowledged_at: expect.any(Date), resolved_at: expect.any(Date) }]);
    expect(await alertEventCount(x.id)).toBe(2);

    await fall(x, 1);
    const second = (await alertRows(x.id))[1];
    expect((await t.post(`/api/mobile/alerts/${second.id}/acknowledge`, {}, token)).status).toBe(200);
    await fall(y, 1);
    const [third] = await alertRows(y.id);

    expect({
      open: await list('?status=open'), acknowledged: await list('?status=acknowledged'), resolved: await list('?status=resolved'), all: await list(''),
    }).toEqual({
      open: { status: 200, ids: [third.id] }, acknowledged: { status: 200, ids: [second.id] },
      resolved: { status: 200, ids: [first.id] }, all: { status: 200, ids: [third.id, second.id, first.id] },
    });
    expect((await list('?status=closed')).status).toBe(400);
  });

  it('resolves an alert by hand from the mobile API with a manual module event, once; 409 again, 404 for another user', async () => {
    const nurse = `nurse-${Date.now()}@example.com`;
    const d = await t.newDevice('health', nurse);
    const stranger = `stranger-${Date.now()}@example.com`;
    await t.newDevice('health', stranger);
    const tokenOf = async (email: string) => (await t.post('/api/mobile/login', { email, password: PASSWORD })).json.data.token as string;
    const [mine, theirs] = [await tokenOf(nurse), await tokenOf(stranger)];
    expect((await t.post(INGEST, { data: { fall_detected: 1 } }, d.token)).status).toBe(200);
    const [alert] = await alertRows(d.id);

    const refused = await t.post(`/api/mobile/alerts/${alert.id}/resolve`, {}, theirs);
    expect([refused.status, refused.json]).toEqual([404, { status: 'error', error: 'Not found.' }]);
    expect((await alertRows(d.id))[0].status).toBe('open');

    const done = await t.post(`/api/mobile/alerts/${alert.id}/resolve`, {}, mine);
    expect(done.status).toBe(200);
    expect(done.json.data.alert).toMatchObject({ id: alert.id, status: 'resolved' });
    expect((await alertRows(d.id))[0]).toMatchObject({ status: 'resolved', resolved_at: expect.any(Date) });
    const events = (await t.db.query("SELECT detail FROM module_events WHERE device_id = $1 AND event_type = 'alert_resolved'", [d.id])).rows;
    expect(events).toEqual([{ detail: expect.objectContaining({ alert_id: alert.id, manual: true, by: nurse }) }]);

    const again = await t.post(`/api/mobile/alerts/${alert.id}/resolve`, {}, mine);
    expect([again.status, again.json.error]).toEqual([409, 'This alert is already resolved; a new firing reading opens a new alert.']);
  });
});

describe('for_count state across a restart', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let t: TestService | null = null;
  beforeAll(async () => { database = await createTestDatabase(); });
  afterAll(async () => { await t?.close(); await database?.drop(); });

  it('keeps counting consecutive firing readings in a new service on the same database, and seeds no rule twice', async () => {
    t = await startTestService({}, { databaseUrl: database.url });
    const rule = (await t.db.query("INSERT INTO alert_rules (metric_name, operator, threshold, for_count) VALUES ('rs_temp', '>', 10, 3) RETURNING id")).rows[0].id;
    const d = await t.newDevice('factory', `restart-${Date.now()}@example.com`);
    const send = async (svc: TestService, value: number) => expect((await svc.post(INGEST, { metric_name: 'rs_temp', metric_value: value }, d.token)).status).toBe(200);
    const state = async (svc: TestService) => ({
      run: (await svc.db.query('SELECT consecutive FROM alert_rule_state WHERE rule_id = $1 AND device_id = $2', [rule, d.id])).rows[0]?.consecutive,
      alerts: (await svc.db.query('SELECT status FROM alerts WHERE rule_id = $1 AND device_id = $2', [rule, d.id])).rows.map((a) => a.status),
      rules: (await svc.db.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n,
    });
    await send(t, 11);
    await send(t, 11);
    expect(await state(t)).toEqual({ run: 2, alerts: [], rules: 18 });
    await t.close();
    t = null;

    t = await startTestService({}, { databaseUrl: database.url });
    expect(await state(t)).toEqual({ run: 2, alerts: [], rules: 18 });
    await send(t, 11);
    expect(await state(t)).toEqual({ run: 3, alerts: ['open'], rules: 18 });
  });
});
