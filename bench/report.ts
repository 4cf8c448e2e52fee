// The bench's printed summary and results/latest.json entries for one workload and for the push-latency mode.
import os from 'node:os';
import type { LoadResult } from './load.js';
import type { PushResult } from './push-latency.js';
import type { RuleActivity } from './rules.js';
import type { BatchStats } from './service-metrics.js';

export interface WorkloadReport {
  name: string;
  connections: number;
  readingsPerRequest: number;
  load: LoadResult;
  readingsPerS: number;
  peakRssMb: number | null;
  batches: BatchStats;
  /** CPU cores kept busy on average: the service process (all threads) and the bench process (autocannon). */
  cpuCores: { service: number | null; loadGenerator: number };
  storedRows: number;
  noLoss: boolean;
  /** W1 only: what the alert engine did during the workload. */
  rules?: { enabled: number; activity: RuleActivity };
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const mark = (ok: boolean) => (ok ? 'PASS' : 'MISS');

export function round(v: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

export function printWorkload(w: WorkloadReport): void {
  const l = w.load;
  const codes = Object.entries(l.status).map(([c, n]) => `${c}:${n}`).join(' ');
  console.log(`\n${w.name} (${w.readingsPerRequest} readings/request, ${w.connections} connections, ${l.durationS.toFixed(1)} s)`);
  console.log(`  req/s            ${fmt(l.reqPerS)}   (status ${codes}; non-2xx ${l.non2xx}; 5xx ${l.status5xx}; errors ${l.errors}; timeouts ${l.timeouts}; unanswered ${l.unanswered})`);
  console.log(`  readings/s       ${fmt(w.readingsPerS)}`);
  console.log(`  latency ms       p50 ${l.latencyMs.p50}  p99 ${l.latencyMs.p99}  max ${l.latencyMs.max}`);
  console.log(`  peak RSS         ${w.peakRssMb ?? 'n/a'} MB (service process, sampled every 100 ms)`);
  console.log(`  batches          ${fmt(w.batches.batches)}, ${fmt(w.batches.avgRows)} rows and ${fmt(w.batches.avgFlushMs, 1)} ms flush-to-commit on average (service /metrics)`);
  console.log(`  CPU              service ${w.cpuCores.service?.toFixed(2) ?? 'n/a'} cores, load generator ${w.cpuCores.loadGenerator.toFixed(2)} cores (of ${os.cpus().length})`);
  if (w.rules) {
    console.log(`  alert rules      ${w.rules.enabled} enabled; ${fmt(w.rules.activity.pairsEvaluated)} (rule, device) states written, ${w.rules.activity.alertsOpened} alerts opened`);
  }
  console.log(`  no-loss check    stored ${fmt(w.storedRows)} rows vs inserted ${fmt(l.insertedSum)} over ${fmt(l.ok200)} 200s` +
    `${l.badBodies ? ` (${l.badBodies} 200 bodies without inserted)` : ''}: ${w.noLoss ? 'PASS' : 'FAIL'}`);
}

export function workloadJson(w: WorkloadReport) {
  return {
    connections: w.connections, readingsPerRequest: w.readingsPerRequest, durationS: round(w.load.durationS, 2),
    reqPerS: round(w.load.reqPerS), readingsPerS: round(w.readingsPerS), latencyMs: w.load.latencyMs,
    status: w.load.status, non2xx: w.load.non2xx, status5xx: w.load.status5xx, unanswered: w.load.unanswered,
    peakRssMb: w.peakRssMb, batches: { count: w.batches.batches, avgRows: round(w.batches.avgRows), avgFlushMs: round(w.batches.avgFlushMs, 1) },
    cpuCores: { service: w.cpuCores.service === null ? null : round(w.cpuCores.service, 2), loadGenerator: round(w.cpuCores.loadGenerator, 2) },
    storedRows: w.storedRows, insertedSum: w.load.insertedSum, noLoss: w.noLoss,
    ...(w.rules ? { rules: w.rules } : {}),
  };
}

export interface PushReport { result: PushResult; devices: number; storedRows: number; noLoss: boolean }

export function printPush(p: PushReport, rate: number, bgConnections: number): void {
  const r = p.result;
  const codes = Object.entries(r.status).map(([c, n]) => `${c}:${n}`).join(' ');
  console.log(`\nIngest 200 -> WebSocket push (/api/live as the devices' owner; ${fmt(rate)} req/s paced over ${fmt(p.devices)} devices` +
    `${r.background ? `, background W1 load on ${bgConnections} connections (another owner's devices)` : ', no background load'})`);
  console.log(`  paced requests   ${fmt(r.sent)} at ${fmt(r.achievedRatePerS, 1)} req/s (status ${codes})`);
  console.log(`  pushes           ${fmt(r.matched)} matched, ${r.missing} missing (none within 5 s), ${fmt(r.pushBefore200)} arrived before their 200 (counted as 0 ms)`);
  console.log(`  200 -> push ms   p50 ${r.latencyMs.p50}  p95 ${r.latencyMs.p95}  p99 ${r.latencyMs.p99}  max ${r.latencyMs.max}`);
  console.log(`  send -> push ms  p50 ${r.sendToPushMs.p50}  p95 ${r.sendToPushMs.p95}  p99 ${r.sendToPushMs.p99}  max ${r.sendToPushMs.max}`);
  if (r.background) {
    const b = r.background;
    console.log(`  background       ${fmt(b.reqPerS)} req/s (status ${JSON.stringify(b.status)}; p99 ${b.latencyMs.p99} ms; unanswered ${b.unanswered})`);
  }
  const inserted = r.insertedSum + (r.background?.insertedSum ?? 0);
  console.log(`  no-loss check    stored ${fmt(p.storedRows)} rows vs inserted ${fmt(inserted)} over the 200s: ${p.noLoss ? 'PASS' : 'FAIL'}`);
}

export function pushJson(p: PushReport, rate: number, bgConnections: number) {
  const r = p.result;
  return {
    ratePerS: rate, achievedRatePerS: round(r.achievedRatePerS, 1), devices: p.devices, sent: r.sent, status: r.status,
    matched: r.matched, missing: r.missing, pushBefore200: r.pushBefore200, negativeDeltasRecordedAsZero: true,
    latencyMs: r.latencyMs, sendToPushMs: r.sendToPushMs,
    background: r.background ? { connections: bgConnections, reqPerS: round(r.background.reqPerS), status: r.background.status, p99Ms: r.background.latencyMs.p99 } : null,
    storedRows: p.storedRows, noLoss: p.noLoss,
  };
}
