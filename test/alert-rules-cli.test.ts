// The rule:* commands, run as operators run them (a child process on the service's database): what they print,
// what they store, what they refuse, and their effect on a running service's alert evaluation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice, deleteDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { runCli } from './support/cli.js';
import { startTestService, type TestService } from './support/service.js';

const RULE_KEYS = ['id', 'owner_id', 'owner', 'module', 'device_id', 'metric_name', 'operator', 'threshold', 'clear_threshold',
  'for_count', 'severity', 'enabled', 'created_at'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Ingest workers re-read the watched metric names once a second.
const RULE_PICKUP_MS = 1100;

describe('rule commands: rule:create, rule:list, rule:update, rule:enable, rule:disable, rule:delete', () => {
  let t: TestService;
  let alice: { id: number };
  let bob: { id: number };
  let aliceDevice: { id: number; token: string };
  let bobDevice: { id: number; token: string };
  let deletedDevice: { id: number };
  const run = (...args: string[]) => runCli(args, { DATABASE_URL: t.databaseUrl });
  const ok = async (...args: string[]) => {
    const r = await run(...args);
    expect(r.stderr, `${args.join(' ')} stderr`).toBe('');
    expect(r.code).toBe(0);
    return r.json;
  };
  const refused = async (args: string[], message: string | RegExp) => {
    const r = await run(...args);
    expect(r.code, args.join(' ')).not.toBe(0);
    expect(r.stdout, args.join(' ')).toBe('');
    if (typeof message === 'string') expect(r.stderr.split('\n')[0], args.join(' ')).toBe(message);
    else expect(r.stderr, args.join(' ')).toMatch(message);
  };
  const storedRule = async (id: number) => (await t.db.query(
    `SELECT r.*, u.email AS owner FROM alert_rules r LEFT JOIN users u ON u.id = r.owner_id WHERE r.id = $1`, [id])).rows[0];
  const ruleCount = async () => (await t.db.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n as number;
  const alertsOf = async (ruleId: number) => (await t.db.query('SELECT device_id, value, status FROM alerts WHERE rule_id = $1', [ruleId])).rows;
  const ingest = async (token: string, data: Record<string, number>) =>
    expect((await t.post('/api/telemetry-ingest', { data }, token)).status).toBe(200);

  beforeAll(async () => {
    t = await startTestService();
    [alice, bob] = await Promise.all([
      createUser(t.db, 'alice@example.com', 'correct horse battery', 'user'),
      createUser(t.db, 'bob@example.com', 'correct horse battery', 'user'),
    ]);
    aliceDevice = await createDevice(t.db, alice.id, 'pendant', 'health');
    bobDevice = await createDevice(t.db, bob.id, 'tracker', 'vehicle');
    deletedDevice = await createDevice(t.db, alice.id, 'old', 'health');
    await deleteDevice(t.db, deletedDevice.id);
  });
  afterAll(async () => { await t?.close(); });

  it('rule:create with every flag prints the stored rule, owned and narrowed as asked', async () => {
    const rule = await ok('rule:create', '--metric', 'heart_rate', '--operator', '>=', '--threshold', '120.5', '--clear-threshold', '110',
      '--for-count', '3', '--severity', 'info', '--module', 'health', '--device', String(aliceDevice.id), '--owner', 'ALICE@example.com', '--disabled');
    expect(Object.keys(rule)).toEqual(RULE_KEYS);
    expect(rule).toEqual({
      id: expect.any(Number), owner_id: alice.id, owner: 'alice@example.com', module: 'health', device_id: aliceDevice.id,
      metric_name: 'heart_rate', operator: '>=', threshold: 120.5, clear_threshold: 110, for_count: 3, severity: 'info',
      enabled: false, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const stored = await storedRule(rule.id);
    expect({ ...stored, created_at: stored.created_at.toISOString() }).toEqual(rule);
  });

  it('rule:create with only the required flags makes an enabled global warning rule with for_count 1', async () => {
    const rule = await ok('rule:create', '--metric', 'temp', '--operator', '<', '--threshold', '-5');
    expect(rule).toMatchObject({ owner_id: null, owner: null, module: null, device_id: null, metric_name: 'temp', operator: '<',
      threshold: -5, clear_threshold: null, for_count: 1, severity: 'warning', enabled: true });
    expect(await storedRule(rule.id)).toMatchObject({ owner_id: null, threshold: -5, enabled: true });
  });

  it('rule:create accepts each operator and the for_count and metric name limits, and stores nothing it refuses', async () => {
    for (const op of ['>', '>=', '<', '<=', '==', '!=']) {
      expect((await ok('rule:create', '--metric', 'm', '--operator', op, '--threshold', '1')).operator).toBe(op);
    }
    expect((await ok('rule:create', '--metric', 'm', '--operator', '>', '--threshold', '1', '--for-count', '1000')).for_count).toBe(1000);
    expect((await ok('rule:create', '--metric', 'a'.repeat(64), '--operator', '>', '--threshold', '1')).metric_name).toHaveLength(64);
    const before = await ruleCount();
    const base = ['rule:create', '--metric', 'm', '--operator', '>', '--threshold', '1'];
    const cases: [string[], string | RegExp][] = [
      [['rule:create', '--operator', '>'], 'A rule needs --metric, --threshold.'],
      [['rule:create', '--metric', 'a'.repeat(65), '--operator', '>', '--threshold', '1'], /^--metric must be 1 to 64 characters from A-Z a-z 0-9 _ \. : \/ -; got "a{65}"\.\n/],
      [['rule:create', '--metric', 'bad name', '--operator', '>', '--threshold', '1'], '--metric must be 1 to 64 characters from A-Z a-z 0-9 _ . : / -; got "bad name".'],
      [['rule:create', '--metric', 'm', '--operator', '=>', '--threshold', '1'], '--operator must be one of > >= < <= == !=; got "=>".'],
      [['rule:create', '--metric', 'm', '--operator', '>', '--threshold', '12abc'], '--threshold must be a finite number; got "12abc".'],
      [['rule:create', '--metric', 'm', '--operator', '>', '--threshold', '1e400'], '--threshold must be a finite number; got "1e400".'],
      [[...base, '--for-count', '0'], '--for-count must be a whole number from 1 to 1000; got 0.'],
      [[...base, '--for-count', '1001'], '--for-count must be a whole number from 1 to 1000; got 1001.'],
      [[...base, '--for-count', '2.5'], '--for-count must be a whole number from 1 to 1000; got 2.5.'],
      [[...base, '--severity', 'fatal'], '--severity must be one of info, warning, critical; got "fatal".'],
      [[...base, '--module', 'kitchen'], '--module must be one of health, vehicle, factory, home_infra, worker, fleet; got "kitchen".'],
      [[...base, '--device', '999999'], '--device 999999 names no device.'],
      [[...base, '--device', String(deletedDevice.id)], `--device ${deletedDevice.id} names no device.`],
      [[...base, '--device', 'abc'], '--device must be a device id (a positive whole number) or none; got "abc".'],
      [[...base, '--owner', 'nobody@example.com'], 'No user with email nobody@example.com.'],
      [[...base, '--owner', 'alice@example.com', '--device', String(bobDevice.id)], /^Device \d+ belongs to another user than the rule's owner, so the rule could never fire/],
      [[...base, '--device', String(bobDevice.id), '--module', 'health'], `Device ${bobDevice.id} is a vehicle device, so a rule for --module health could never fire on it; drop --module or make it vehicle.`],
      [[...base, '--clear-threshold', '2'], '--clear-threshold (2) must be at or below --threshold (1) for >: the alert opens when the value is > 1 and resolves once it is no longer > 2.'],
      [['rule:create', '--metric', 'm', '--operator', '<', '--threshold', '1', '--clear-threshold', '0'], /^--clear-threshold \(0\) must be at or above --threshold \(1\) for </],
      [['rule:create', '--metric', 'm', '--operator', '==', '--threshold', '1', '--clear-threshold', '1'], /^--clear-threshold applies only to the operators > >= < <=/],
      [[...base, '--disabled', 'maybe'], '--disabled takes no value (or true or false); got "maybe".'],
      [[...base, '--thresold', '2'], /^Unknown flag --thresold\.\nUsage:/],
    ];
    await Promise.all(cases.map(([args, message]) => refused(args, message)));
    expect(await ruleCount()).toBe(before);
  });

  it('rule:list prints every rule oldest first, or one owner\'s with --owner, or the global ones with --owner none', async () => {
    const all = await ok('rule:list');
    expect(all.map((r: any) => r.id)).toEqual((await t.db.query('SELECT id FROM alert_rules ORDER BY id')).rows.map((r) => r.id));
    expect(all.find((r: any) => r.metric_name === 'fall_detected')).toMatchObject({ owner: null, operator: '==', threshold: 1, severity: 'critical' });
    for (const r of all) expect(Object.keys(r)).toEqual(RULE_KEYS);
    const bobs = await ok('rule:create', '--metric', 'speed', '--operator', '>', '--threshold', '130', '--owner', 'bob@example.com');
    expect((await ok('rule:list', '--owner', 'bob@example.com')).map((r: any) => r.id)).toEqual([bobs.id]);
    const alices = await ok('rule:list', '--owner', 'alice@example.com');
    expect(alices.length).toBeGreaterThan(0);
    expect(alices.every((r: any) => r.owner_id === alice.id)).toBe(true);
    const globals = await ok('rule:list', '--owner', 'none');
    expect(globals.length).toBe(all.filter((r: any) => r.owner_id === null).length);
    expect(globals.every((r: any) => r.owner === null)).toBe(true);
    await refused(['rule:list', '--owner', 'nobody@example.com'], 'No user with email nobody@example.com.');
  });

  it('rule:update changes only the flags given, "none" clears a field, and a change restarts the for_count count', async () => {
    const rule = await ok('rule:create', '--metric', 'spo2', '--operator', '<', '--threshold', '92', '--clear-threshold', '95', '--for-count', '2', '--owner', 'alice@example.com');
    await t.db.query('INSERT INTO alert_rule_state (rule_id, device_id, consecutive) VALUES ($1, $2, 1)', [rule.id, aliceDevice.id]);
    const updated = await ok('rule:update', '--id', String(rule.id), '--threshold', '90', '--clear-threshold', 'none', '--severity', 'critical');
    expect(updated).toEqual({ ...rule, threshold: 90, clear_threshold: null, severity: 'critical' });
    expect(await storedRule(rule.id)).toMatchObject({ threshold: 90, clear_threshold: null, severity: 'critical', for_count: 2, owner_id: alice.id });
    expect((await t.db.query('SELECT consecutive FROM alert_rule_state WHERE rule_id = $1', [rule.id])).rows).toEqual([{ consecutive: 0 }]);
    expect(await ok('rule:update', '--id', String(rule.id), '--owner', 'none', '--disabled')).toMatchObject({ owner_id: null, owner: null, enabled: false });

    await refused(['rule:update', '--id', String(rule.id), '--threshold', '80', '--clear-threshold', '70'], /^--clear-threshold \(70\) must be at or above --threshold \(80\)/);
    await refused(['rule:update', '--id', String(rule.id)], /^Nothing to change: give at least one of rule:create's flags\.\nUsage:/);
    await refused(['rule:update', '--id', '999999', '--threshold', '1'], 'No rule with id 999999.');
    await refused(['rule:update', '--id', 'abc', '--threshold', '1'], /^--id must be a positive whole number; got "abc"\.\n/);
    expect(await storedRule(rule.id)).toMatchObject({ threshold: 90, clear_threshold: null, enabled: false });
  });

  it('a rule created with rule:create fires on the owner\'s device at the next ingest, and on no one else\'s', async () => {
    const rule = await ok('rule:create', '--metric', 'cli_probe', '--operator', '>=', '--threshold', '10', '--owner', 'alice@example.com');
    await sleep(RULE_PICKUP_MS);
    await ingest(aliceDevice.token, { cli_probe: 10 });
    await ingest(bobDevice.token, { cli_probe: 99 });
    expect(await alertsOf(rule.id)).toEqual([{ device_id: aliceDevice.id, value: 10, status: 'open' }]);
  });

  it('rule:disable stops a rule from firing and rule:enable starts it again', async () => {
    const rule = await ok('rule:create', '--metric', 'cli_switch', '--operator', '==', '--threshold', '1', '--owner', 'alice@example.com');
    expect(await ok('rule:disable', '--id', String(rule.id))).toEqual({ ...rule, enabled: false });
    expect((await storedRule(rule.id)).enabled).toBe(false);
    await sleep(RULE_PICKUP_MS);
    await ingest(aliceDevice.token, { cli_switch: 1 });
    expect(await alertsOf(rule.id)).toEqual([]);

    expect(await ok('rule:enable', '--id', String(rule.id))).toEqual({ ...rule, enabled: true });
    await sleep(RULE_PICKUP_MS);
    await ingest(aliceDevice.token, { cli_switch: 1 });
    expect(await alertsOf(rule.id)).toEqual([{ device_id: aliceDevice.id, value: 1, status: 'open' }]);
    await refused(['rule:enable', '--id', '999999'], 'No rule with id 999999.');
    await refused(['rule:disable', '--id', String(rule.id), '--threshold', '2'], /^rule:disable takes only --id\.\n/);
  });

  it('rule:delete removes the rule with its for_count state and every alert it opened, and prints how many', async () => {
    const rule = await ok('rule:create', '--metric', 'cli_gone', '--operator', '>', '--threshold', '0', '--for-count', '2', '--device', String(aliceDevice.id));
    await sleep(RULE_PICKUP_MS);
    await ingest(aliceDevice.token, { cli_gone: 1 });
    await ingest(aliceDevice.token, { cli_gone: 2 });
    expect(await alertsOf(rule.id)).toHaveLength(1);

    expect(await ok('rule:delete', '--id', String(rule.id))).toEqual({ id: rule.id, deleted: true, alerts_deleted: 1 });
    expect(await storedRule(rule.id)).toBeUndefined();
    expect(await alertsOf(rule.id)).toEqual([]);
    expect((await t.db.query('SELECT count(*)::int AS n FROM alert_rule_state WHERE rule_id = $1', [rule.id])).rows[0].n).toBe(0);
    // Readings keep flowing once the rule is gone.
    await ingest(aliceDevice.token, { cli_gone: 3 });
    await refused(['rule:delete', '--id', String(rule.id)], `No rule with id ${rule.id}.`);
    await refused(['rule:delete', '--id', '1', '--metric', 'x'], /^rule:delete takes only --id\.\n/);
  });
});
