// Alert rules through the mobile API: who sees and manages which rule (user vs admin; own vs another user's vs
// global), validation answers, and a rule created through the API firing on the next ingest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { startTestService, type TestService } from './support/service.js';

const PASSWORD = 'correct horse battery';
const NOT_FOUND = { status: 'error', error: 'Not found.' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Ingest workers re-read the watched metric names once a second.
const RULE_PICKUP_MS = 1100;

describe('mobile rules API: GET/POST /api/mobile/rules, update and delete by id', () => {
  let t: TestService;
  let alice: { id: number }, bob: { id: number }, adminId: number;
  let aliceToken: string, bobToken: string, adminToken: string;
  let aliceDevice: { id: number; token: string }, bobDevice: { id: number; token: string };
  // The rules of the matrix: alice's, bob's, a global one, and a global one narrowed to bob's device.
  const rules = { alice: 0, bob: 0, global: 0, globalOnBob: 0 };

  const call = async (method: string, path: string, token: string | null, body?: unknown) => {
    const res = await fetch(t.baseUrl + path, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: JSON.parse(text) };
  };
  const login = async (email: string, password = PASSWORD) => {
    const r = await t.post('/api/mobile/login', { email, password });
    expect(r.status, email).toBe(200);
    return r.json.data.token as string;
  };
  const create = async (token: string, body: unknown) => {
    const r = await call('POST', '/api/mobile/rules', token, body);
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    return r.json.data.rule;
  };
  const stored = async (id: number) => (await t.db.query('SELECT * FROM alert_rules WHERE id = $1', [id])).rows[0];
  const visibleIds = async (token: string) => (await call('GET', '/api/mobile/rules', token)).json.data.rules.map((r: any) => r.id);

  beforeAll(async () => {
    t = await startTestService();
    [alice, bob] = await Promise.all([createUser(t.db, 'alice@example.com', PASSWORD), createUser(t.db, 'bob@example.com', PASSWORD)]);
    adminId = (await t.db.query("SELECT id FROM users WHERE email = 'admin@test.local'")).rows[0].id;
    aliceDevice = await createDevice(t.db, alice.id, 'pendant', 'health');
    bobDevice = await createDevice(t.db, bob.id, 'pendant', 'health');
    [aliceToken, bobToken, adminToken] = await Promise.all([login('alice@example.com'), login('bob@example.com'), login('admin@test.local', 'test-admin-password')]);
    rules.alice = (await create(aliceToken, { metric_name: 'heart_rate', operator: '>', threshold: 120 })).id;
    rules.bob = (await create(bobToken, { metric_name: 'heart_rate', operator: '>', threshold: 140, device_id: bobDevice.id })).id;
    rules.global = (await create(adminToken, { owner_id: null, metric_name: 'glucose', operator: '>', threshold: 250 })).id;
    rules.globalOnBob = (await create(adminToken, { owner_id: null, device_id: bobDevice.id, metric_name: 'spo2', operator: '<', threshold: 85 })).id;
  });
  afterAll(async () => { await t?.close(); });

  it('shows a user the global rules and their own, never another user\'s or one narrowed to another user\'s device; an admin sees all', async () => {
    const all = (await t.db.query('SELECT id, owner_id, device_id FROM alert_rules ORDER BY id')).rows;
    const globals = all.filter((r) => r.owner_id === null && r.device_id === null).map((r) => r.id);
    expect(globals).toContain(rules.global);
    expect(await visibleIds(aliceToken)).toEqual([...globals, rules.alice].sort((a, b) => a - b));
    expect(await visibleIds(bobToken)).toEqual([...globals, rules.bob, rules.globalOnBob].sort((a, b) => a - b));
    expect(await visibleIds(adminToken)).toEqual(all.map((r) => r.id));

    const own = await call('GET', `/api/mobile/rules/${rules.alice}`, aliceToken);
    expect(own.status).toBe(200);
    expect(own.json.data.rule).toEqual({
      id: rules.alice, owner_id: alice.id, owner: 'alice@example.com', module: null, device_id: null, metric_name: 'heart_rate',
      operator: '>', threshold: 120, clear_threshold: null, for_count: 1, severity: 'warning', enabled: true, created_at: expect.any(String),
    });
    expect((await call('GET', `/api/mobile/rules/${rules.global}`, aliceToken)).status).toBe(200);
    for (const id of [rules.bob, rules.globalOnBob, 999999, 'abc']) {
      expect(await call('GET', `/api/mobile/rules/${id}`, aliceToken)).toEqual({ status: 404, json: NOT_FOUND });
    }
    expect((await call('GET', '/api/mobile/rules', null)).status).toBe(401);
    expect((await call('GET', '/api/mobile/rules?access_token=' + aliceToken, null)).status).toBe(401);
  });

  it('lets a user create rules only for themselves and their own devices; another user\'s device is not found', async () => {
    const rule = await create(aliceToken, { metric_name: 'spo2', operator: '<', threshold: 90, clear_threshold: 93, for_count: 3, severity: 'critical', module: 'health', device_id: aliceDevice.id });
    expect(rule).toMatchObject({ owner_id: alice.id, device_id: aliceDevice.id, module: 'health', clear_threshold: 93, for_count: 3, severity: 'critical' });
    expect(await create(aliceToken, { owner_id: alice.id, metric_name: 'x', operator: '==', threshold: 1 })).toMatchObject({ owner_id: alice.id });

    const before = (await t.db.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n;
    const foreign = await call('POST', '/api/mobile/rules', aliceToken, { metric_name: 'x', operator: '>', threshold: 1, device_id: bobDevice.id });
    const missing = await call('POST', '/api/mobile/rules', aliceToken, { metric_name: 'x', operator: '>', threshold: 1, device_id: 999999 });
    expect(foreign).toEqual({ status: 404, json: { status: 'error', error: `device_id ${bobDevice.id} names no device of yours.` } });
    expect(missing).toEqual({ status: 404, json: { status: 'error', error: 'device_id 999999 names no device of yours.' } });
    expect(await call('POST', '/api/mobile/rules', aliceToken, { owner_id: null, metric_name: 'x', operator: '>', threshold: 1 })).toEqual({ status: 403,
      json: { status: 'error', error: 'Only an admin may own a global rule (owner_id null); leave owner_id out to own the rule yourself.' } });
    expect(await call('POST', '/api/mobile/rules', aliceToken, { owner_id: bob.id, metric_name: 'x', operator: '>', threshold: 1 })).toEqual({ status: 403,
      json: { status: 'error', error: 'A user may own only their own rules; leave owner_id out.' } });
    expect((await t.db.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n).toBe(before);
  });

  it('lets an admin create global rules and rules for any user, owning them by default, and checks the device fits the owner', async () => {
    expect(await create(adminToken, { metric_name: 'x', operator: '>', threshold: 1 })).toMatchObject({ owner_id: adminId, owner: 'admin@test.local' });
    expect(await create(adminToken, { owner_id: bob.id, device_id: bobDevice.id, metric_name: 'x', operator: '>', threshold: 1 }))
      .toMatchObject({ owner_id: bob.id, owner: 'bob@example.com', device_id: bobDevice.id });
    expect(await call('POST', '/api/mobile/rules', adminToken, { device_id: bobDevice.id, metric_name: 'x', operator: '>', threshold: 1 })).toEqual({ status: 400,
      json: { status: 'error', error: `Device ${bobDevice.id} belongs to another user than the rule's owner, so the rule could never fire; give the rule the device's owner, or make it global.` } });
    expect(await call('POST', '/api/mobile/rules', adminToken, { owner_id: 999999, metric_name: 'x', operator: '>', threshold: 1 }))
      .toEqual({ status: 400, json: { status: 'error', error: 'owner_id 999999 names no user.' } });
    expect(await call('POST', '/api/mobile/rules', adminToken, { owner_id: null, device_id: 999999, metric_name: 'x', operator: '>', threshold: 1 }))
      .toEqual({ status: 404, json: { status: 'error', error: 'device_id 999999 names no device.' } });
  });

  it('lets a user change only their own rules: another user\'s is not found, a global one is forbidden', async () => {
    for (const method of ['POST', 'PUT']) {
      const r = await call(method, `/api/mobile/rules/${rules.alice}`, aliceToken, { threshold: method === 'POST' ? 125 : 126, for_count: 2 });
      expect(r.status, method).toBe(200);
      expect(r.json.data.rule).toMatchObject({ id: rules.alice, metric_name: 'heart_rate', operator: '>', threshold: method === 'POST' ? 125 : 126, for_count: 2, owner_id: alice.id });
    }
    const bobBefore = await stored(rules.bob);
    const globalBefore = await stored(rules.global);
    for (const method of ['POST', 'PUT']) {
      expect(await call(method, `/api/mobile/rules/${rules.bob}`, aliceToken, { threshold: 1 })).toEqual({ status: 404, json: NOT_FOUND });
      expect(await call(method, `/api/mobile/rules/${rules.globalOnBob}`, aliceToken, { threshold: 1 })).toEqual({ status: 404, json: NOT_FOUND });
      expect(await call(method, `/api/mobile/rules/${rules.global}`, aliceToken, { enabled: false })).toEqual({ status: 403,
        json: { status: 'error', error: `Rule ${rules.global} is a global rule: only an admin may change or delete it.` } });
    }
    expect(await call('POST', `/api/mobile/rules/${rules.alice}`, aliceToken, { owner_id: null })).toMatchObject({ status: 403 });
    expect(await call('POST', `/api/mobile/rules/${rules.alice}`, aliceToken, { device_id: bobDevice.id }))
      .toEqual({ status: 404, json: { status: 'error', error: `device_id ${bobDevice.id} names no device of yours.` } });
    expect(await stored(rules.bob)).toEqual(bobBefore);
    expect(await stored(rules.global)).toEqual(globalBefore);
    expect(await stored(rules.alice)).toMatchObject({ threshold: 126, owner_id: alice.id, device_id: null });

    // An admin may change any rule, global ones included.
    expect((await call('PUT', `/api/mobile/rules/${rules.global}`, adminToken, { threshold: 260 })).json.data.rule).toMatchObject({ owner_id: null, threshold: 260 });
    expect((await call('POST', `/api/mobile/rules/${rules.bob}`, adminToken, { enabled: false })).json.data.rule).toMatchObject({ owner_id: bob.id, enabled: false });
  });

  it('answers 400 with a message naming the field for every invalid rule, and stores nothing', async () => {
    const base = { metric_name: 'm', operator: '>', threshold: 1 };
    const cases: [unknown, string][] = [
      ['not json', 'Send the rule\'s fields as a JSON object, e.g. {"metric_name":"heart_rate","operator":">","threshold":120}.'],
      [[base], 'Send the rule\'s fields as a JSON object, e.g. {"metric_name":"heart_rate","operator":">","threshold":120}.'],
      [{ metric_name: 'm' }, 'A rule needs operator, threshold.'],
      [{ ...base, threshhold: 2 }, 'Unknown field "threshhold"; a rule has owner_id, module, device_id, metric_name, operator, threshold, clear_threshold, for_count, severity, enabled.'],
      [{ ...base, metric_name: 'a'.repeat(65) }, `metric_name must be 1 to 64 characters from A-Z a-z 0-9 _ . : / -; got "${'a'.repeat(65)}".`],
      [{ ...base, metric_name: 7 }, 'metric_name must be 1 to 64 characters from A-Z a-z 0-9 _ . : / -; got 7.'],
      [{ ...base, operator: '=' }, 'operator must be one of > >= < <= == !=; got "=".'],
      [{ ...base, threshold: '1' }, 'threshold must be a finite number; got "1".'],
      ['{"metric_name":"m","operator":">","threshold":1e400}', 'threshold must be a finite number; got Infinity.'],
      [{ ...base, clear_threshold: 'none' }, 'clear_threshold must be a finite number or none; got "none".'],
      [{ ...base, clear_threshold: 2 }, 'clear_threshold (2) must be at or below threshold (1) for >: the alert opens when the value is > 1 and resolves once it is no longer > 2.'],
      [{ ...base, for_count: 0 }, 'for_count must be a whole number from 1 to 1000; got 0.'],
      [{ ...base, for_count: 1001 }, 'for_count must be a whole number from 1 to 1000; got 1001.'],
      [{ ...base, for_count: 1.5 }, 'for_count must be a whole number from 1 to 1000; got 1.5.'],
      [{ ...base, severity: 'CRITICAL' }, 'severity must be one of info, warning, critical; got "CRITICAL".'],
      [{ ...base, module: 'kitchen' }, 'module must be one of health, vehicle, factory, home_infra, worker, fleet; got "kitchen".'],
      [{ ...base, device_id: String(aliceDevice.id) }, `device_id must be a device id (a positive whole number); got "${aliceDevice.id}".`],
      [{ ...base, device_id: aliceDevice.id, module: 'vehicle' }, `Device ${aliceDevice.id} is a health device, so a rule for module vehicle could never fire on it; drop module or make it health.`],
      [{ ...base, enabled: 'yes' }, 'enabled must be true or false; got "yes".'],
    ];
    const before = (await t.db.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n;
    for (const [body, error] of cases) {
      expect(await call('POST', '/api/mobile/rules', aliceToken, body), JSON.stringify(body)).toEqual({ status: 400, json: { status: 'error', error } });
    }
    expect((await t.db.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n).toBe(before);
    expect(await call('PUT', `/api/mobile/rules/${rules.alice}`, aliceToken, {})).toEqual({ status: 400,
      json: { status: 'error', error: 'Send at least one field to change, e.g. {"threshold":125}.' } });
    expect(await call('POST', `/api/mobile/rules/${rules.alice}`, aliceToken, { clear_threshold: 999 })).toMatchObject({ status: 400 });
    expect((await stored(rules.alice)).clear_threshold).toBeNull();
  });

  it('a rule created through the API fires on the next ingest after about a second, for the owner\'s devices only', async () => {
    const rule = await create(aliceToken, { metric_name: 'api_probe', operator: '>', threshold: 50, severity: 'critical' });
    await sleep(RULE_PICKUP_MS);
    expect((await t.post('/api/telemetry-ingest', { data: { api_probe: 51 } }, aliceDevice.token)).status).toBe(200);
    expect((await t.post('/api/telemetry-ingest', { data: { api_probe: 99 } }, bobDevice.token)).status).toBe(200);
    const alerts = await t.db.query('SELECT device_id, value, severity, status FROM alerts WHERE rule_id = $1', [rule.id]);
    expect(alerts.rows).toEqual([{ device_id: aliceDevice.id, value: 51, severity: 'critical', status: 'open' }]);
  });

  it('lets a user delete only their own rules, by DELETE or POST .../delete, taking the rule\'s alerts with it', async () => {
    const rule = await create(aliceToken, { metric_name: 'api_gone', operator: '>=', threshold: 1, device_id: aliceDevice.id });
    await sleep(RULE_PICKUP_MS);
    expect((await t.post('/api/telemetry-ingest', { data: { api_gone: 1 } }, aliceDevice.token)).status).toBe(200);
    expect((await t.db.query('SELECT count(*)::int AS n FROM alerts WHERE rule_id = $1', [rule.id])).rows[0].n).toBe(1);

    for (const [method, suffix] of [['DELETE', ''], ['POST', '/delete']]) {
      expect(await call(method, `/api/mobile/rules/${rules.bob}${suffix}`, aliceToken)).toEqual({ status: 404, json: NOT_FOUND });
      expect(await call(method, `/api/mobile/rules/${rules.globalOnBob}${suffix}`, aliceToken)).toEqual({ status: 404, json: NOT_FOUND });
      expect(await call(method, `/api/mobile/rules/${rules.global}${suffix}`, aliceToken)).toMatchObject({ status: 403 });
    }
    expect(await stored(rules.bob)).toBeDefined();
    expect(await stored(rules.global)).toBeDefined();

    expect(await call('DELETE', `/api/mobile/rules/${rule.id}`, aliceToken)).toEqual({ status: 200, json: { status: 'ok', data: { id: rule.id, deleted: true, alerts_deleted: 1 } } });
    expect(await stored(rule.id)).toBeUndefined();
    expect((await t.db.query('SELECT count(*)::int AS n FROM alerts WHERE rule_id = $1', [rule.id])).rows[0].n).toBe(0);
    expect(await call('DELETE', `/api/mobile/rules/${rule.id}`, aliceToken)).toEqual({ status: 404, json: NOT_FOUND });
    const other = await create(aliceToken, { metric_name: 'y', operator: '>', threshold: 1 });
    expect(await call('POST', `/api/mobile/rules/${other.id}/delete`, aliceToken)).toMatchObject({ status: 200, json: { data: { id: other.id, alerts_deleted: 0 } } });

    // An admin deletes anyone's rule, global ones included.
    expect((await call('DELETE', `/api/mobile/rules/${rules.globalOnBob}`, adminToken)).status).toBe(200);
    expect((await call('POST', `/api/mobile/rules/${rules.bob}/delete`, adminToken)).status).toBe(200);
    expect(await stored(rules.bob)).toBeUndefined();
  });

  it('refuses a user\'s 101st rule with 409, while an admin has no limit', async () => {
    const owned = (await t.db.query('SELECT count(*)::int AS n FROM alert_rules WHERE owner_id = $1', [alice.id])).rows[0].n;
    await t.db.query(`INSERT INTO alert_rules (owner_id, metric_name, operator, threshold)
                      SELECT $1, 'filler', '>', 1 FROM generate_series(1, $2::int)`, [alice.id, 99 - owned]);
    await create(aliceToken, { metric_name: 'hundredth', operator: '>', threshold: 1 });
    expect(await call('POST', '/api/mobile/rules', aliceToken, { metric_name: 'one_more', operator: '>', threshold: 1 })).toEqual({ status: 409,
      json: { status: 'error', error: 'You already own 100 rules, the most a user may; change or delete one instead.' } });
    expect((await t.db.query('SELECT count(*)::int AS n FROM alert_rules WHERE owner_id = $1', [alice.id])).rows[0].n).toBe(100);
    expect((await call('POST', '/api/mobile/rules', adminToken, { owner_id: alice.id, metric_name: 'by_admin', operator: '>', threshold: 1 })).status).toBe(201);
  });
});
