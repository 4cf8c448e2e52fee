import { BatchBuilder, type BatchPayload } from './batch-format.js';
import type { NormalisedBody } from './normalise.js';

export interface BatcherOptions {
  maxRows: number;        // BATCH_MAX_ROWS: a batch this large flushes at once
  maxWaitMs: number;      // BATCH_MAX_WAIT_MS: the longest a request waits for its batch to fill
  maxQueueRows: number;   // QUEUE_MAX_ROWS: accepted but uncommitted rows; beyond it, admission fails
  maxInFlight: number;    // batches in the workers at once (one per worker)
}

/** What a worker reports of a committed batch: the requests it left out because their token was revoked. */
/** An alert opened or resolved by a batch, as ingest_commit_batch reports it (for live delivery). */
export interface AlertChange {
  type: 'alert_opened' | 'alert_resolved';
  alert_id: number; rule_id: number; device_id: number; owner_id: number;
  metric_name: string; value: number; severity?: string; at: string;
}
export interface BatchOutcome { refused?: number[]; alertChanges?: AlertChange[] }
export type RunBatch = (payload: BatchPayload, transferList: ArrayBuffer[]) => Promise<BatchOutcome | undefined>;

/** The error a request settles with when its device token was rotated or deleted before its batch committed. */
export const TOKEN_REVOKED = new Error('device token revoked before commit');
/** Called once per request: ok after its batch committed, or with the reason it did not. */
export type Settle = (err: Error | null) => void;

export interface BatchStats { rows: number; readings: number; requests: number; latencyMs: number; ok: boolean; error?: Error; alertChanges?: AlertChange[] }

/**
 * Gathers rows from many requests into batches, flushed by size or by time. While every worker is busy
 * a due batch keeps growing instead of queueing behind them, so batches grow with load (group commit).
 * Each request counts its readings, its GPS fix and one row for its module event.
 */
export class Batcher {
  private builder = new BatchBuilder();
  private settles: Settle[] = [];
  private rows = 0;
  private queuedRows = 0;
  private inFlight = 0;
  private timer: NodeJS.Timeout | null = null;
  private due = false;
  private inFlightDone = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly opts: BatcherOptions,
    private readonly runBatch: RunBatch,
    private readonly onBatch: (stats: BatchStats) => void = () => {},
  ) {}

  /** Rows accepted and not yet committed or failed. */
  get queueDepth(): number { return this.queuedRows; }

  /**
   * Adds one request's rows unless the queue is full or closed (then nothing is taken).
   * `settle` is called exactly once, after the batch holding these rows committed or failed.
   */
  offer(deviceId: number, moduleIdx: number, eventType: number, receivedAtMs: number, body: NormalisedBody | null, tokenHash: string, settle: Settle): 'accepted' | 'full' | 'closed' {
    const rows = (body ? body.values.length + (body.gps ? 1 : 0) : 0) + 1;
    if (this.closed) return 'closed';
    if (this.queuedRows + rows > this.opts.maxQueueRows) return 'full';
    this.builder.add(deviceId, moduleIdx, eventType, receivedAtMs, body, tokenHash);
    this.settles.push(settle);
    this.rows += rows;
    this.queuedRows += rows;
    if (this.rows >= this.opts.maxRows) this.flush();
    else if (this.timer === null && !this.due) this.timer = setTimeout(this.onTimer, this.opts.maxWaitMs);
    return 'accepted';
  }

  private onTimer = (): void => {
    this.timer = null;
    if (this.inFlight < this.opts.maxInFlight) this.flush();
    else this.due = true;
  };

  private flush(): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    this.due = false;
    if (this.rows === 0) return;
    const settles = this.settles;
    const rows = this.rows;
    const { payload, transferList } = this.builder.build();
    const readings = payload.readingCount;
    this.settles = [];
    this.rows = 0;
    this.inFlight++;
    const started = performance.now();
    const done = this.runBatch(payload, transferList).then(
      (outcome) => this.finish(settles, rows, readings, started, null, outcome ?? undefined),
      (err: unknown) => this.finish(settles, rows, readings, started, err instanceof Error ? err : new Error(String(err))),
    );
    this.inFlightDone.add(done);
    void done.finally(() => this.inFlightDone.delete(done));
  }

  private finish(settles: Settle[], rows: number, readings: number, started: number, err: Error | null, outcome: BatchOutcome = {}): void {
    const refused = outcome.refused ?? [];
    this.inFlight--;
    this.queuedRows -= rows;
    this.onBatch({ rows, readings, requests: settles.length, latencyMs: performance.now() - started, ok: err === null, error: err ?? undefined, alertChanges: outcome.alertChanges ?? [] });
    const refusedSet = new Set(refused);
    for (let i = 0; i < settles.length; i++) {
      // One request's answer failing (a closed socket, say) must not keep the others waiting.
      try { settles[i](err ?? (refusedSet.has(i) ? TOKEN_REVOKED : null)); } catch { /* the request is gone */ }
    }
    if (this.due && this.rows > 0) this.flush();
  }

  /** Stops taking requests, flushes what was accepted and waits until every batch has settled. */
  async drain(): Promise<void> {
    this.closed = true;
    this.flush();
    while (this.inFlightDone.size > 0) await Promise.allSettled([...this.inFlightDone]);
  }
}
