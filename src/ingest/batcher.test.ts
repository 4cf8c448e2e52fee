import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BatchPayload } from './batch-format.js';
import { Batcher, type BatcherOptions, type BatchStats } from './batcher.js';
import type { NormalisedBody } from './normalise.js';

// The worker pool is replaced by a recorder whose batches the test commits or fails by hand:
// the batcher's contract is about when runBatch is called and when each request is settled.
interface Call { payload: BatchPayload; transferList: ArrayBuffer[]; resolve(): void; reject(e: unknown): void }

function harness(opts: Partial<BatcherOptions> = {}) {
  const calls: Call[] = [];
  const stats: BatchStats[] = [];
  const batcher = new Batcher(
    { maxRows: 1000, maxWaitMs: 20, maxQueueRows: 10_000, maxInFlight: 1, ...opts },
    (payload, transferList) => new Promise((resolve, reject) => calls.push({ payload, transferList, resolve: () => resolve(undefined), reject })),
    (s) => stats.push(s),
  );
  const settled: (Error | null)[][] = [];
  /** Offers one request with `readings` readings (0 = heartbeat); returns its settle log. */
  const offer = (readings: number, device = 1) => {
    const log: (Error | null)[] = [];
    settled.push(log);
    const body: NormalisedBody | null = readings === 0 ? null : {
      times: Array(readings).fill(1e12), names: Array.from({ length: readings }, (_, i) => `m${i}`),
      values: Array(readings).fill(1), units: Array(readings).fill(null), skipped: 0, gps: null,
    };
    return { result: batcher.offer(device, 0, readings === 0 ? 1 : 0, 1e12, body, `token-of-${device}`, (e) => log.push(e)), log };
  };
  return { batcher, calls, stats, offer, settled };
}

// Lets promise callbacks (then/finally) run.
const tick = () => new Promise<void>((r) => setImmediate(r));

describe('Batcher: flushing', () => {
  beforeEach(() => { vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }); });
  afterEach(() => { vi.useRealTimers(); });

  it('flushes at once when the rows reach maxRows, counting one row per request for its event', () => {
    const h = harness({ maxRows: 5 });
    h.offer(3); // 4 rows: limit - 1
    expect(h.calls).toHaveLength(0);
    h.offer(0); // 5 rows: the limit
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0].payload.readingCount).toBe(3);
    expect(h.calls[0].payload.eventCount).toBe(2);
    h.offer(5); // 6 rows in one request: limit + 1
    expect(h.calls).toHaveLength(2);
    expect(h.calls[1].payload.readingCount).toBe(5);
  });

  it('flushes a partial batch after maxWaitMs and not before', () => {
    const h = harness({ maxWaitMs: 20 });
    h.offer(1);
    vi.advanceTimersByTime(10);
    h.offer(2);
    vi.advanceTimersByTime(9);
    expect(h.calls).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0].payload.readingCount).toBe(3);
    expect(h.calls[0].payload.eventCount).toBe(2);
  });

  it('settles each request only after its batch committed, and reports the batch', async () => {
    const h = harness();
    const a = h.offer(2), b = h.offer(0);
    vi.advanceTimersByTime(20);
    await tick();
    expect(a.log).toEqual([]);
    expect(h.batcher.queueDepth).toBe(4);
    h.calls[0].resolve();
    await tick();
    expect(a.log).toEqual([null]);
    expect(b.log).toEqual([null]);
    expect(h.batcher.queueDepth).toBe(0);
    expect(h.stats).toEqual([expect.objectContaining({ rows: 4, requests: 2, ok: true })]);
  });

  it('keeps growing a due batch while every worker is busy and flushes it when one completes', async () => {
    const h = harness({ maxInFlight: 1, maxWaitMs: 20 });
    h.offer(1);
    vi.advanceTimersByTime(20);
    expect(h.calls).toHaveLength(1);
    h.offer(1);
    vi.advanceTimersByTime(20); // due, but the only worker is busy
    h.offer(2);
    vi.advanceTimersByTime(100);
    h.offer(3);
    expect(h.calls).toHaveLength(1);
    h.calls[0].resolve();
    await tick();
    expect(h.calls).toHaveLength(2);
    expect(h.calls[1].payload.eventCount).toBe(3);
    expect(h.calls[1].payload.readingCount).toBe(6);
  });

  it('uses a free worker when one of several is busy', () => {
    const h = harness({ maxInFlight: 2, maxWaitMs: 20 });
    h.offer(1);
    vi.advanceTimersByTime(20);
    h.offer(1);
    vi.advanceTimersByTime(20);
    expect(h.calls).toHaveLength(2);
  });
});

describe('Batcher: admission and failure', () => {
  it('accepts up to maxQueueRows and refuses the request that would pass it, taking nothing of it', async () => {
    const h = harness({ maxQueueRows: 6, maxWaitMs: 5 });
    expect(h.offer(4).result).toBe('accepted'); // 5 rows
    const refused = h.offer(1); // 5 + 2 = 7: limit + 1
    expect(refused.result).toBe('full');
    expect(h.batcher.queueDepth).toBe(5);
    expect(h.offer(0).result).toBe('accepted'); // 6: the limit
    expect(h.batcher.queueDepth).toBe(6);
    expect(h.offer(0).result).toBe('full');
    await vi.waitFor(() => expect(h.calls).toHaveLength(1));
    expect(h.calls[0].payload.eventCount).toBe(2);
    expect(h.calls[0].payload.readingCount).toBe(4);
    h.calls[0].resolve();
    await tick();
    expect(refused.log).toEqual([]);
    expect(h.batcher.queueDepth).toBe(0);
    expect(h.offer(5).result).toBe('accepted'); // 6 again: room came back after the commit
  });

  it('calls every settle exactly once with the error when runBatch rejects, and frees the queue', async () => {
    const h = harness({ maxRows: 3 });
    const a = h.offer(1), b = h.offer(1);
    expect(h.calls).toHaveLength(1);
    const boom = new Error('deadlock detected');
    h.calls[0].reject(boom);
    await tick();
    expect(a.log).toEqual([boom]);
    expect(b.log).toEqual([boom]);
    expect(h.batcher.queueDepth).toBe(0);
    expect(h.stats).toEqual([expect.objectContaining({ rows: 4, requests: 2, ok: false })]);
  });

  it('settles every other request of a batch when one settle throws', async () => {
    const h = harness({ maxRows: 1000 });
    h.batcher.offer(1, 0, 0, 1e12, null, 'token-of-1', () => { throw new Error('socket gone'); });
    const b = h.offer(1);
    const drained = h.batcher.drain();
    h.calls[0].resolve();
    await drained;
    expect(b.log).toEqual([null]);
    expect(h.batcher.queueDepth).toBe(0);
  });

  it('wraps a rejection that is not an Error', async () => {
    const h = harness({ maxRows: 1 });
    const a = h.offer(0);
    h.calls[0].reject('worker exited');
    await tick();
    expect(a.log).toHaveLength(1);
    expect(a.log[0]).toBeInstanceOf(Error);
    expect(a.log[0]!.message).toBe('worker exited');
  });
});

describe('Batcher: drain', () => {
  it('flushes what was accepted at once, waits for in-flight batches and then refuses with closed', async () => {
    const h = harness({ maxRows: 2, maxWaitMs: 10_000, maxInFlight: 1 });
    const first = h.offer(1); // flushed by size
    const second = h.offer(0); // waiting for its timer
    expect(h.calls).toHaveLength(1);
    let drained = false;
    const drain = h.batcher.drain().then(() => { drained = true; });
    expect(h.calls).toHaveLength(2); // flushed without waiting 10 s
    expect(h.offer(1).result).toBe('closed');
    await tick();
    expect(drained).toBe(false);
    h.calls[1].resolve();
    await tick();
    expect(drained).toBe(false);
    h.calls[0].resolve();
    await drain;
    expect(first.log).toEqual([null]);
    expect(second.log).toEqual([null]);
    expect(h.calls).toHaveLength(2);
    expect(h.offer(0).result).toBe('closed');
    expect(h.batcher.queueDepth).toBe(0);
  });

  it('resolves at once when nothing is pending', async () => {
    const h = harness();
    await h.batcher.drain();
    expect(h.calls).toHaveLength(0);
  });

  it('still settles every request when an in-flight batch fails during drain', async () => {
    const h = harness({ maxRows: 1 });
    const a = h.offer(0);
    const drain = h.batcher.drain();
    h.calls[0].reject(new Error('connection lost'));
    await drain;
    expect(a.log.map((e) => e?.message)).toEqual(['connection lost']);
  });
});
