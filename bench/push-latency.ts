// Ingest 200 -> WebSocket push latency: a /api/live client logged in as the devices' owner, a paced sender
// posting readings that each carry a unique `push.seq` value, and per request the time from receiving its
// 200 to receiving the matching {"type":"device", device_id, latest: {"push.seq": ...}} push. Pushes that never
// arrive within PUSH_TIMEOUT_MS are failures. A background autocannon load (other devices, another owner, so
// no pushes are built for it) can run at the same time.
import http from 'node:http';
import WebSocket from 'ws';
import { runLoad, type LoadResult } from './load.js';

export const PUSH_TIMEOUT_MS = 5000;
export const PUSH_SEQ_METRIC = 'push.seq';

export interface PushOptions {
  baseUrl: string;
  email: string;
  password: string;
  /** Devices of that owner the paced sender cycles through (parallel arrays). */
  deviceIds: readonly number[];
  tokens: readonly string[];
  ratePerS: number;
  durationS: number;
  /** Background load on other devices (not watched by the client); null for none. */
  background: { tokens: readonly string[]; bodies: readonly string[]; connections: number } | null;
}

export interface PushResult {
  sent: number;
  /** Answers by status ("network" for none). */
  status: Record<string, number>;
  ok200: number;
  /** Sum of `inserted` over the 200 answers (for the no-loss check). */
  insertedSum: number;
  /** 200s whose push arrived within PUSH_TIMEOUT_MS. */
  matched: number;
  /** 200s whose push never arrived (or arrived later than PUSH_TIMEOUT_MS). */
  missing: number;
  /** Pushes received before their 200 (recorded as 0 ms: the service publishes right before it answers). */
  pushBefore200: number;
  /** 200 -> push, negative deltas as 0. */
  latencyMs: Percentiles;
  /** request sent -> push: the end-to-end view, for comparison. */
  sendToPushMs: Percentiles;
  achievedRatePerS: number;
  background: LoadResult | null;
}

export interface Percentiles { count: number; p50: number; p95: number; p99: number; max: number; mean: number }

export function percentiles(values: number[]): Percentiles {
  const v = [...values].sort((a, b) => a - b);
  const at = (p: number) => (v.length === 0 ? 0 : v[Math.min(v.length - 1, Math.ceil(p * v.length) - 1)]);
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    count: v.length, p50: round(at(0.5)), p95: round(at(0.95)), p99: round(at(0.99)), max: round(v.length ? v[v.length - 1] : 0),
    mean: round(v.length ? v.reduce((a, b) => a + b, 0) / v.length : 0),
  };
}

async function mobileLogin(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/mobile/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password }),
  });
  const body = await res.json() as { data?: { token?: string } };
  if (res.status !== 200 || !body.data?.token) throw new Error(`mobile login as ${email} answered ${res.status}`);
  return body.data.token;
}

function connectLive(baseUrl: string, accessToken: string, onPush: (deviceId: number, seq: number) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/live`, { headers: { Authorization: `Bearer ${accessToken}` } });
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { type: string; device_id?: number; latest?: Record<string, { value: number }> };
      if (m.type === 'hello') { resolve(ws); return; }
      const seq = m.type === 'device' ? m.latest?.[PUSH_SEQ_METRIC]?.value : undefined;
      if (seq !== undefined && m.device_id !== undefined) onPush(m.device_id, seq);
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`/api/live refused the upgrade with ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

interface Pending { deviceId: number; sentAt: number; okAt: number | null; pushAt: number | null }

export async function measurePushLatency(o: PushOptions): Promise<PushResult> {
  const accessToken = await mobileLogin(o.baseUrl, o.email, o.password);
  const pending = new Map<number, Pending>();
  let wrongDevice = 0;
  const ws = await connectLive(o.baseUrl, accessToken, (deviceId, seq) => {
    const p = pending.get(seq);
    if (!p) return;
    if (p.deviceId !== deviceId) { wrongDevice++; return; }
    p.pushAt ??= performance.now();
  });

  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const target = new URL('/api/telemetry-ingest', o.baseUrl);
  const status: Record<string, number> = {};
  let insertedSum = 0;
  const inFlight = new Set<Promise<void>>();
  const post = (seq: number, i: number) => new Promise<void>((resolve) => {
    const body = JSON.stringify({ data: { [PUSH_SEQ_METRIC]: seq, heart_rate: 60 + (seq % 40), spo2: 95 + (seq % 4) } });
    const p: Pending = { deviceId: o.deviceIds[i], sentAt: performance.now(), okAt: null, pushAt: null };
    pending.set(seq, p);
    const req = http.request(target, {
      method: 'POST', agent,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Authorization: `Bearer ${o.tokens[i]}` },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => {
        const key = String(res.statusCode);
        status[key] = (status[key] ?? 0) + 1;
        if (res.statusCode === 200) {
          p.okAt = performance.now();
          try { insertedSum += (JSON.parse(text) as { inserted: number }).inserted; } catch { /* counted as missing push at worst */ }
        } else {
          pending.delete(seq); // not committed: no push is owed
        }
        resolve();
      });
    });
    req.on('error', () => { status.network = (status.network ?? 0) + 1; pending.delete(seq); resolve(); });
    req.end(body);
  });

  const backgroundRun = o.background
    ? runLoad({ url: o.baseUrl, path: '/api/telemetry-ingest', connections: o.background.connections, durationS: o.durationS, tokens: o.background.tokens, bodies: o.background.bodies })
    : Promise.resolve(null);

  // Paced: every tick sends what is due by now, so a slow tick catches up instead of lowering the rate.
  const started = performance.now();
  const total = Math.round(o.ratePerS * o.durationS);
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * o.ratePerS));
      for (; sent < due; sent++) {
        const done = post(sent + 1, sent % o.deviceIds.length);
        inFlight.add(done);
        void done.then(() => inFlight.delete(done));
      }
      if (sent >= total) { clearInterval(tick); resolve(); }
    }, 2);
  });
  const sendingS = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  const background = await backgroundRun;
  // Give the last pushes their full time to arrive.
  const lastOk = [...pending.values()].reduce((m, p) => Math.max(m, p.okAt ?? 0), 0);
  while ([...pending.values()].some((p) => p.okAt !== null && p.pushAt === null) && performance.now() - lastOk < PUSH_TIMEOUT_MS) {
    await new Promise((r) => setTimeout(r, 20));
  }
  ws.close();
  agent.destroy();

  const deltas: number[] = [];
  const sendToPush: number[] = [];
  let missing = wrongDevice;
  let pushBefore200 = 0;
  for (const p of pending.values()) {
    if (p.okAt === null) continue;
    if (p.pushAt === null || p.pushAt - p.okAt > PUSH_TIMEOUT_MS) { missing++; continue; }
    if (p.pushAt < p.okAt) pushBefore200++;
    deltas.push(Math.max(0, p.pushAt - p.okAt));
    sendToPush.push(p.pushAt - p.sentAt);
  }
  return {
    sent, status, ok200: status['200'] ?? 0, insertedSum, matched: deltas.length, missing, pushBefore200,
    latencyMs: percentiles(deltas), sendToPushMs: percentiles(sendToPush), achievedRatePerS: sent / sendingS, background,
  };
}
