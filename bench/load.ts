// autocannon, driven so that its numbers can be checked against the database:
// - requests go round-robin over all device tokens, across connections (one shared counter);
// - every 200 body is parsed and its `inserted` added up;
// - at the end no request is cut off: each connection stops sending and waits for its last answer, so every
//   request sent has been answered (autocannon's own stop destroys sockets with requests in flight, whose
//   rows the service may still commit, and the stored count could then not be compared exactly).
import { createRequire } from 'node:module';

interface AutocannonClient {
  reqsMade: number;
  responseMax?: number;
  on(event: 'request' | 'response', fn: (...args: unknown[]) => void): void;
}
interface AutocannonRequest { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer }
interface AutocannonResult {
  latency: { p50: number; p99: number; max: number; average: number };
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as Autocannon;

export interface LoadOptions {
  url: string;
  path: string;
  connections: number;
  durationS: number;
  tokens: readonly string[];
  bodies: readonly string[];
  /** Longest wait for the last answers once the duration is over. */
  drainS?: number;
}

export interface LoadResult {
  durationS: number;
  sent: number;
  answered: number;
  /** Sent but never answered (timeouts, dropped connections): 0 in a clean run. */
  unanswered: number;
  status: Record<string, number>;
  ok200: number;
  non2xx: number;
  status5xx: number;
  /** Sum of `inserted` over the 200 answers. */
  insertedSum: number;
  /** 200 answers whose body had no numeric `inserted`. */
  badBodies: number;
  /** 200 answers per second, from the first request to the last answer. */
  reqPerS: number;
  latencyMs: { p50: number; p99: number; max: number; mean: number };
  errors: number;
  timeouts: number;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const clients: AutocannonClient[] = [];
  let next = 0;
  let sent = 0;
  let answered = 0;
  let lastAnswerAt = 0;
  let insertedSum = 0;
  let badBodies = 0;

  const setupRequest = (req: AutocannonRequest): AutocannonRequest => {
    const i = next++;
    return {
      ...req,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${o.tokens[i % o.tokens.length]}` },
      body: o.bodies[i % o.bodies.length],
    };
  };
  const onResponse = (status: number, body: string) => {
    if (status !== 200) return;
    try {
      const inserted = (JSON.parse(body) as { inserted?: unknown }).inserted;
      if (typeof inserted === 'number') insertedSum += inserted; else badBodies++;
    } catch {
      badBodies++;
    }
  };
  const setupClient = (client: AutocannonClient) => {
    clients.push(client);
    client.on('request', () => { sent++; });
    client.on('response', () => { answered++; lastAnswerAt = performance.now(); });
  };

  const drainS = o.drainS ?? 30;
  const started = performance.now();
  // Past the duration, each client's limit becomes what it has sent: it sends nothing more, and closes
  // once its last answer is in. autocannon's own duration is only the backstop for a stuck drain.
  const stopSending = setTimeout(() => {
    for (const c of clients) c.responseMax = Math.max(1, c.reqsMade);
  }, o.durationS * 1000);
  let result: AutocannonResult;
  try {
    result = await autocannon({
      url: o.url,
      connections: o.connections,
      pipelining: 1,
      duration: o.durationS + drainS,
      timeout: 20,
      requests: [{ method: 'POST', path: o.path, setupRequest, onResponse }],
      setupClient,
    });
  } finally {
    clearTimeout(stopSending);
  }

  const status: Record<string, number> = {};
  for (const [code, s] of Object.entries(result.statusCodeStats)) status[code] = s.count;
  const ok200 = status['200'] ?? 0;
  const count = (pred: (code: number) => boolean) =>
    Object.entries(status).filter(([c]) => pred(Number(c))).reduce((n, [, v]) => n + v, 0);
  const durationS = ((lastAnswerAt || performance.now()) - started) / 1000;
  return {
    durationS,
    sent,
    answered,
    unanswered: sent - answered,
    status,
    ok200,
    non2xx: count((c) => c < 200 || c >= 300),
    status5xx: count((c) => c >= 500),
    insertedSum,
    badBodies,
    reqPerS: ok200 / durationS,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max, mean: result.latency.average },
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
