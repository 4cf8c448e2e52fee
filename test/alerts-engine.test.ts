// The alert engine's evaluation (evaluate_alerts, sql/005), driven through real HTTP ingest and asserted on the
// alerts, alert_rule_state and module_events tables: operators at their boundaries, for_count, hysteresis,
// automatic resolution, the default rules, recorded_at order within a request, rule narrowing, and one
// unresolved alert per (rule, device) under concurrent requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

const INGEST = '/api/telemetry-ingest';
// The workers re-read the metric names enabled rules watch at most 1 s apart: a rule for a new name needs this.
const RULES_REACH_WORKERS_MS = 1100;

interface RuleSpec {
  metric_name: string; operator: string; threshold: number; clear_threshold?: number; for_count?: number;
  severity?: string; module?: string; device_id?: number; owner_id?: number; enabled?: boolean;
}

describe('alert engine evaluation', () => {
  let t: TestService;
  let seeded: Record<string, unknown>[];
  const owner = `engine-${Date.now()}@example.com`;
  // Small batches: concurrent requests spread over several batches on both workers.
  beforeAll(async () => {
    t = await startTestService({ ingestWorkers: 2, batchMaxRows: 4 });
    seeded = (await t.db.query('SELECT metric_name, operator, threshold, clear_threshold, for_count, severity, module, device_id, owner_id, enabled FROM alert_rules ORDER BY id')).rows;
  });
  afterAll(async () => { await t?.close(); });

  async function addRules(...specs: RuleSpec[]): Promise<number[]> {
    const ids: number[] = [];
    for (const r of specs) {
      const res = await t.db.query(`INSERT INTO alert_rules (metric_name, operator, threshold, clear_threshold, for_count, severity, module, device_id, owner_id, enabled)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [r.metric_name, r.operator, r.threshold, r.clear_threshold ?? null, r.for_count ?? 1, r.severity ?? 'warning',
        r.module ?? null, r.device_id ?? null, r.owner_id ?? null, r.enabled ?? true]);
      ids.push(res.rows[0].id);
    }
    await new Promise((resolve) => setTimeout(resolve, RULES_REACH_WORKERS_MS));
    return ids;
  }

  // Readings an hour ago, one second apart: every request has its own, increasing recorded_at.
  let clockMs = Date.now() - 3_600_000;
  const nextTime = () => new Date((clockMs += 1000)).toISOString();

  async function send(token: string, metric: string, value: number, recordedAt = nextTime()): Promise<string> {
    const r = await t.post(INGEST, { metric_name: metric, metric_value: value, recorded_at: recordedAt }, token);
    expect(r.status).toBe(200);
    return recordedAt;
  }
  const alertsOf = async (ruleId: number, deviceId: number) => (await t.db.query(
    'SELECT id, status, value, opened_at, resolved_at FROM alerts WHERE rule_id = $1 AND device_id = $2 ORDER BY id', [ruleId, deviceId])).rows;
  const runOf = async (ruleId: number, deviceId: number): Promise<number | null> => (await t.db.query(
    'SELECT consecutive FROM alert_rule_state WHERE rule_id = $1 AND device_id = $2', [ruleId, deviceId])).rows[0]?.consecutive ?? null;
  const alertEvents = async (deviceId: number) => (await t.db.query(
    "SELECT event_type, time, detail FROM module_events WHERE device_id = $1 AND event_type LIKE 'alert\\_%' ORDER BY time, event_type DESC", [deviceId])).rows;

  it('fires each operator exactly where its comparison holds, at threshold - 0.001, threshold and threshold + 0.001', async () => {
    const ops: [string, string, boolean[]][] = [
      ['>', 'cmp_gt', [false, false, true]], ['>=', 'cmp_ge', [false, true, true]], ['<', 'cmp_lt', [true, false, false]],
      ['<=', 'cmp_le', [true, true, false]], ['==', 'cmp_eq', [false, true, false]], ['!=', 'cmp_ne', [true, false, true]],
    ];
    const ruleIds = await addRules(...ops.map(([operator, metric_name]) => ({ metric_name, operator, threshold: 10 })));
    const values = [9.999, 10, 10.001];
    const first = await t.newDevice('factory', owner);
    const devices = [first, ...await Promise.all(Array.from({ length: 17 }, () => t.newDevice('factory', owner)))];
    // One fresh device per (operator, value), all sent at once: each alert count is that one reading's verdict.
    await Promise.all(ops.flatMap(([, metric], o) => values.map((v, k) => send(devices[o * 3 + k].token, metric, v))));

    const fired: Record<string, boolean[]> = {};
    const runs: Record<string, (number | null)[]> = {};
    for (const [o, [op]] of ops.entries()) {
      fired[op] = await Promise.all(values.map(async (_, k) => (await alertsOf(ruleIds[o], devices[o * 3 + k].id)).length === 1));
      runs[op] = await Promise.all(values.map((_, k) => runOf(ruleIds[o], devices[o * 3 + k].id)));
    }
    expect(fired).toEqual(Object.fromEntries(ops.map(([op, , expected]) => [op, expected])));
    // A reading nothing fires on, on a device with nothing under way, writes no state at all (sql/007's fast path).
    expect(runs).toEqual(Object.fromEntries(ops.map(([op, , expected]) => [op, expected.map((f) => (f ? 1 : null))])));
  });

  it('opens one alert after for_count consecutive firing readings, and a non-firing reading resets the count', async () => {
    const [rule] = await addRules({ metric_name: 'fc_level', operator: '>', threshold: 10, for_count: 3 });
    const d = await t.newDevice('factory', owner);
    const steps: [number, number][] = [[11, 1], [11, 2], [10, 0], [11, 1], [11, 2]];
    for (const [value, run] of steps) {
      await send(d.token, 'fc_level', value);
      expect({ value, run: await runOf(rule, d.id), alerts: (await alertsOf(rule, d.id)).length }).toEqual({ value, run, alerts: 0 });
    }
    const third = await send(d.token, 'fc_level', 11.5);
    expect(await alertsOf(rule, d.id)).toEqual([{ id: expect.any(Number), status: 'open', value: 11.5, opened_at: new Date(third), resolved_at: null }]);
    expect(await runOf(rule, d.id)).toBe(3);
    await send(d.token, 'fc_level', 12);
    expect((await alertsOf(rule, d.id)).length).toBe(1);
    expect(await runOf(rule, d.id)).toBe(4);
  });

  it('resets the count on a non-firing reading between two firing ones of the same request, in recorded_at order', async () => {
    const [rule] = await addRules({ metric_name: 'fc_batch', operator: '>', threshold: 10, for_count: 2 });
    const d = await t.newDevice('factory', owner);
    const at = (s: number) => new Date(clockMs + s * 1000).toISOString();
    clockMs += 10_000;
    // Body order differs from time order: 11 @1 s, 5 @2 s, 11 @3 s never makes two in a row.
    const r = await t.post(INGEST, { readings: [
      { metric_name: 'fc_batch', metric_value: 11, recorded_at: at(3) },
      { metric_name: 'fc_batch', metric_value: 11, recorded_at: at(1) },
      { metric_name: 'fc_batch', metric_value: 5, recorded_at: at(2) },
    ] }, d.token);
    expect(r.status).toBe(200);
    expect(await alertsOf(rule, d.id)).toEqual([]);
    expect(await runOf(rule, d.id)).toBe(1);
    // The device has a count under way: its next reading, firing or not, is evaluated in full.
    clockMs += 10_000;
    await send(d.token, 'fc_batch', 4);
    expect(await runOf(rule, d.id)).toBe(0);
  });

  it('keeps one alert while values flap around the threshold, and resolves it only past clear_threshold', async () => {
    const [high, low] = await addRules(
      { metric_name: 'hy_pressure', operator: '>', threshold: 100, clear_threshold: 90 },
      { metric_name: 'hy_oxygen', operator: '<', threshold: 90, clear_threshold: 95 });
    const d = await t.newDevice('factory', owner);
    const flaps: [number, string][] = [[101, 'open'], [99, 'open'], [101, 'open'], [95, 'open'], [101, 'open'], [90.001, 'open'], [89, 'resolved']];
    let resolvedAt = '';
    for (const [value, status] of flaps) {
      resolvedAt = await send(d.token, 'hy_pressure', value);
      expect({ value, statuses: (await alertsOf(high, d.id)).map((a) => a.status) }).toEqual({ value, statuses: [status] });
    }
    expect((await alertsOf(high, d.id))[0]).toMatchObject({ value: 101, resolved_at: new Date(resolvedAt) });
    // The clear condition is NOT (value < 95): exactly 95 clears.
    for (const [value, status] of [[89, 'open'], [91, 'open'], [94.999, 'open'], [95, 'resolved']] as [number, string][]) {
      await send(d.token, 'hy_oxygen', value);
      expect({ value, statuses: (await alertsOf(low, d.id)).map((a) => a.status) }).toEqual({ value, statuses: [status] });
    }
    expect((await alertEvents(d.id)).map((e) => [e.event_type, e.detail.metric_name])).toEqual([
      ['alert_opened', 'hy_pressure'], ['alert_resolved', 'hy_pressure'], ['alert_opened', 'hy_oxygen'], ['alert_resolved', 'hy_oxygen']]);
  });

  it('resolves without clear_threshold once the firing condition stops holding, and opens a new alert when it fires again', async () => {
    const [rule] = await addRules({ metric_name: 'ar_load', operator: '>=', threshold: 50 });
    const d = await t.newDevice('factory', owner);
    const opened = await send(d.token, 'ar_load', 50);
    await send(d.token, 'ar_load', 55);
    const resolved = await send(d.token, 'ar_load', 49.999);
    const again = await send(d.token, 'ar_load', 50);
    const alerts = await alertsOf(rule, d.id);
    expect(alerts).toEqual([
      { id: expect.any(Number), status: 'resolved', value: 50, opened_at: new Date(opened), resolved_at: new Date(resolved) },
      { id: expect.any(Number), status: 'open', value: 50, opened_at: new Date(again), resolved_at: null },
    ]);
    expect((await alertEvents(d.id)).map((e) => [e.event_type, e.time, e.detail.alert_id ?? null])).toEqual([
      ['alert_opened', new Date(opened), null], ['alert_resolved', new Date(resolved), alerts[0].id], ['alert_opened', new Date(again), null]]);
  });

  it('seeds the seventeen default rules of the SPEC once, global, critical and enabled', () => {
    const flags = ['fall_detected', 'panic_pressed', 'impact_detected', 'geofence_breach', 'fire_detected', 'water_leak', 'power_failure', 'high_temperature', 'inactivity'];
    const thresholds: [string, string, number][] = [['spo2', '<', 90], ['heart_rate', '>', 130], ['heart_rate', '<', 40], ['systolic', '>', 180],
      ['glucose', '<', 70], ['gas_ppm', '>', 50], ['smoke_level', '>', 0.1], ['impact_g_force', '>', 4]];
    const rule = ([metric_name, operator, threshold]: [string, string, number]) => ({
      metric_name, operator, threshold, clear_threshold: null, for_count: 1, severity: 'critical', module: null, device_id: null, owner_id: null, enabled: true });
    expect(seeded).toEqual([...flags.map((f) => rule([f, '==', 1])), ...thresholds.map(rule)]);
  });

  it('opens a critical alert for every default flag set to 1, on the default rule', async () => {
    const d = await t.newDevice('health', owner);
    const flags = ['fall_detected', 'panic_pressed', 'impact_detected', 'geofence_breach', 'fire_detected', 'water_leak', 'power_failure', 'high_temperature', 'inactivity'];
    expect((await t.post(INGEST, { data: Object.fromEntries(flags.map((f) => [f, 1])) }, d.token)).status).toBe(200);
    const rows = (await t.db.query(`SELECT a.metric_name, a.severity, a.status, r.owner_id, r.module FROM alerts a JOIN alert_rules r ON r.id = a.rule_id
      WHERE a.device_id = $1 ORDER BY a.rule_id`, [d.id])).rows;
    expect(rows).toEqual(flags.map((metric_name) => ({ metric_name, severity: 'critical', status: 'open', owner_id: null, module: null })));
  });

  it('applies the heart_rate defaults at their boundaries: 130 and 40 open nothing, 131 and 39 do', async () => {
    const d = await t.newDevice('health', owner);
    const byRule = async () => (await t.db.query(`SELECT r.operator, a.status, a.value FROM alerts a JOIN alert_rules r ON r.id = a.rule_id
      WHERE a.device_id = $1 ORDER BY a.id`, [d.id])).rows;
    await send(d.token, 'heart_rate', 130);
    expect(await byRule()).toEqual([]);
    await send(d.token, 'heart_rate', 131);
    expect(await byRule()).toEqual([{ operator: '>', status: 'open', value: 131 }]);
    await send(d.token, 'heart_rate', 40);
    expect(await byRule()).toEqual([{ operator: '>', status: 'resolved', value: 131 }]);
    await send(d.token, 'heart_rate', 39);
    expect(await byRule()).toEqual([{ operator: '>', status: 'resolved', value: 131 }, { operator: '<', status: 'open', value: 39 }]);
  });

  it('evaluates the readings of one request in recorded_at order, not in body order', async () => {
    const d = await t.newDevice('health', owner);
    const t1 = nextTime();
    const t2 = nextTime();
    const body = { readings: [
      { metric_name: 'fall_detected', metric_value: 0, recorded_at: t2 },
      { metric_name: 'fall_detected', metric_value: 1, recorded_at: t1 }] };
    expect((await t.post(INGEST, body, d.token)).status).toBe(200);
    const alerts = (await t.db.query('SELECT status, opened_at, resolved_at FROM alerts WHERE device_id = $1', [d.id])).rows;
    expect(alerts).toEqual([{ status: 'resolved', opened_at: new Date(t1), resolved_at: new Date(t2) }]);
    expect((await alertEvents(d.id)).map((e) => [e.event_type, e.time])).toEqual([['alert_opened', new Date(t1)], ['alert_resolved', new Date(t2)]]);
  });

  it('ignores a late reading older than one already evaluated, so it cannot reopen a resolved alert', async () => {
    const d = await t.newDevice('health', owner);
    const early = nextTime();
    const late = nextTime();
    await send(d.token, 'fall_detected', 0, late);
    await send(d.token, 'fall_detected', 1, early); // arrives after a newer all-clear
    expect((await t.db.query('SELECT count(*)::int AS n FROM alerts WHERE device_id = $1', [d.id])).rows[0].n).toBe(0);
    await send(d.token, 'fall_detected', 1);
    expect((await t.db.query("SELECT status FROM alerts WHERE device_id = $1", [d.id])).rows).toEqual([{ status: 'open' }]);
  });

  it('narrows rules to a module, a device or an owner, and a disabled rule fires nothing', async () => {
    const other = `engine-other-${Date.now()}@example.com`;
    const aFactory = await t.newDevice('factory', owner);
    const aFactory2 = await t.newDevice('factory', owner);
    const aVehicle = await t.newDevice('vehicle', owner);
    const bFactory = await t.newDevice('factory', other);
    const [byModule, byDevice, byOwner, disabled] = await addRules(
      { metric_name: 'nr_probe', operator: '>', threshold: 0, module: 'factory' },
      { metric_name: 'nr_probe', operator: '>', threshold: 0, device_id: aFactory.id },
      { metric_name: 'nr_probe', operator: '>', threshold: 0, owner_id: bFactory.ownerId },
      { metric_name: 'nr_probe', operator: '>', threshold: 0, enabled: false });
    const devices = { aFactory, aFactory2, aVehicle, bFactory };
    for (const d of Object.values(devices)) await send(d.token, 'nr_probe', 1);

    const fired = async (rule: number) => {
      const names: string[] = [];
      for (const [name, d] of Object.entries(devices)) if ((await alertsOf(rule, d.id)).length === 1) names.push(name);
      return names;
    };
    expect({ byModule: await fired(byModule), byDevice: await fired(byDevice), byOwner: await fired(byOwner), disabled: await fired(disabled) })
      .toEqual({ byModule: ['aFactory', 'aFactory2', 'bFactory'], byDevice: ['aFactory'], byOwner: ['bFactory'], disabled: [] });
    expect((await t.db.query('SELECT count(*)::int AS n FROM alert_rule_state WHERE rule_id = $1', [disabled])).rows[0].n).toBe(0);
  });

  it('applies a rule inserted while the service runs within about a second', async () => {
    const d = await t.newDevice('factory', owner);
    await send(d.token, 'late_metric', 5); // no rule yet: the workers' watched names leave it out
    const res = await t.db.query("INSERT INTO alert_rules (metric_name, operator, threshold) VALUES ('late_metric', '>', 1) RETURNING id");
    await new Promise((resolve) => setTimeout(resolve, RULES_REACH_WORKERS_MS));
    // Both workers may take the next batches: each must have re-read the rules.
    await Promise.all([send(d.token, 'late_metric', 5), send(d.token, 'late_metric', 6)]);
    expect((await alertsOf(res.rows[0].id, d.id)).map((a) => a.status)).toEqual(['open']);
    expect(await runOf(res.rows[0].id, d.id)).toBe(2);
  });

  it('applies a changed threshold to the next batch once the change is notified, well inside the one-second re-read', async () => {
    const [rule] = await addRules({ metric_name: 'notify_metric', operator: '>', threshold: 100 });
    const d = await t.newDevice('factory', owner);
    // Both workers have read the rule with threshold 100: 50 fires nothing and writes no state.
    await Promise.all([send(d.token, 'notify_metric', 50), send(d.token, 'notify_metric', 50)]);
    expect(await alertsOf(rule, d.id)).toEqual([]);
    await t.db.query('UPDATE alert_rules SET threshold = 10 WHERE id = $1', [rule]);
    await new Promise((resolve) => setTimeout(resolve, 150)); // NOTIFY's way to the workers, not the 1 s re-read
    await Promise.all([send(d.token, 'notify_metric', 50), send(d.token, 'notify_metric', 50)]);
    expect((await alertsOf(rule, d.id)).map((a) => a.status)).toEqual(['open']);
  });

  it('still evaluates readings after one stamped far in the future (a device clock running ahead)', async () => {
    const d = await t.newDevice('health', owner);
    const ahead = new Date(Date.now() + 3_600_000).toISOString();
    await send(d.token, 'fall_detected', 0, ahead);
    // Server-stamped, so older than the hour-ahead reading: without the clock-skew guard it would count as late.
    expect((await t.post(INGEST, { data: { fall_detected: 1 } }, d.token)).status).toBe(200);
    const [fall] = (await t.db.query("SELECT a.status FROM alerts a JOIN alert_rules r ON r.id = a.rule_id WHERE a.device_id = $1 AND r.metric_name = 'fall_detected'", [d.id])).rows;
    expect(fall?.status).toBe('open');
  });

  it('opens one alert when 20 concurrent requests of one device all fire the same rule', async () => {
    const d = await t.newDevice('health', owner);
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.post(INGEST, { data: { fall_detected: 1 } }, d.token)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const alerts = (await t.db.query('SELECT rule_id, status FROM alerts WHERE device_id = $1', [d.id])).rows;
    expect(alerts).toEqual([{ rule_id: expect.any(Number), status: 'open' }]);
    // Server-stamped readings of concurrent batches may commit out of time order; older ones are skipped.
    const run = await runOf(alerts[0].rule_id, d.id);
    expect(run).toBeGreaterThanOrEqual(1);
    expect(run).toBeLessThanOrEqual(20);
    expect((await alertEvents(d.id)).map((e) => e.event_type)).toEqual(['alert_opened']);
  });
});
