// The webhook dispatcher (SPEC §5 "Delivery", §8): drains the outbox that the ingest transaction (alerts) and
// the offline sweeper fill. One instance at a time delivers: the one whose dedicated connection holds a
// session-level advisory lock. If it dies, its connection closes, the lock frees, and another takes over at its
// next poll. Each delivery is retried with exponential backoff until a 2xx (at-least-once).
import pg from 'pg';
import type { Logger } from '../observability/logger.js';
import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from './webhook-signature.js';

export interface DispatcherOptions {
  pollMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  giveUpH: number;
  timeoutMs: number;
  log: Logger;
  onAttempt?: (outcome: 'delivered' | 'retry' | 'failed') => void;
  onError?: (err: Error) => void;
}

interface Due {
  id: string; user_id: string; event_type: string; payload: Record<string, unknown>; created_at: Date; attempts: number; url: string; secret: string;
}

// A round takes at most this many due deliveries, and at most PER_RECEIVER of one receiver, so one busy or
// dead receiver cannot crowd out the others.
const ROUND_SIZE = 200;
const PER_RECEIVER = 20;
// Receivers served at once. A receiver's deliveries go one after another, in outbox order, in one lane; a slow
// lane never holds up the next round, which only skips that receiver until its lane is done.
const PARALLEL_RECEIVERS = 8;
const PURGE_EVERY_MS = 3600_000;

/** Exponential backoff with ±20% jitter, so many failed deliveries do not retry in lockstep. */
export function retryDelayMs(attemptsBefore: number, baseMs: number, maxMs: number, random = Math.random): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.min(attemptsBefore, 40));
  return Math.round(Math.min(maxMs, exp * (0.8 + 0.4 * random())));
}

export class WebhookDispatcher {
  private client: pg.Client | null = null;
  private leader = false;
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<number | null> | null = null;
  private again = false;
  private stopped = false;
  private lastPurge = 0;
  /** Receivers (user ids) with a lane under way, and the lanes themselves. */
  private readonly busy = new Set<string>();
  private readonly lanes = new Set<Promise<void>>();
  /** Aborts every request in flight at stop(). */
  private readonly stopping = new AbortController();

  constructor(private readonly databaseUrl: string, private readonly pool: Pool, private readonly options: DispatcherOptions) {}

  get isLeader(): boolean { return this.leader; }

  start(): void {
    this.schedule(0);
  }

  /** Stops polling, aborts deliveries in flight (they stay due) and releases the lock by closing its connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.stopping.abort();
    await this.round?.catch(() => {});
    await Promise.allSettled([...this.lanes]);
    const c = this.client;
    this.client = null;
    this.leader = false;
    await c?.end().catch(() => {});
  }

  /**
   * One round now (tests, and every poll): becomes leader if no one is, then starts lanes for what is due.
   * Returns the number of deliveries started, or null when another instance leads. A call during a round
   * returns that round's promise and asks for one more round after it.
   */
  runOnce(): Promise<number | null> {
    if (this.round) { this.again = true; return this.round; }
    const round = this.startRound().finally(() => { this.round = null; });
    this.round = round;
    return round;
  }

  /** Resolves when every lane started so far has finished (tests). */
  async idle(): Promise<void> {
    while (this.lanes.size > 0) await Promise.allSettled([...this.lanes]);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = null;
    this.runOnce().then((n) => {
      // A full round means more is due: go on at once instead of waiting a poll.
      const more = this.again || (n !== null && n >= ROUND_SIZE);
      this.again = false;
      this.schedule(more ? 0 : this.options.pollMs);
    }, (err: Error) => {
      this.options.log.error({ err }, 'webhook dispatch failed; retrying at the next poll');
      this.options.onError?.(err);
      this.schedule(this.options.pollMs);
    });
  }

  private async connect(): Promise<pg.Client> {
    if (this.client) return this.client;
    const c = new pg.Client({ connectionString: this.databaseUrl });
    c.on('error', (err) => {
      // The connection died: so did the lock. Reconnect and compete again at the next round.
      this.options.log.warn({ err }, 'webhook dispatcher connection lost');
      this.dropConnection(c);
    });
    c.on('notification', () => { if (this.leader) this.schedule(0); });
    await c.connect();
    await c.query(`LISTEN ${q.WEBHOOK_CHANNEL}`);
    this.client = c;
    return c;
  }

  private dropConnection(c: pg.Client): void {
    if (this.client !== c) return;
    this.client = null;
    this.leader = false;
    c.end().catch(() => {});
  }

  private async startRound(): Promise<number | null> {
    if (this.stopped) return null;
    const c = await this.connect();
    try {
      // Asked every round, not remembered: a connection the server dropped unnoticed has lost the lock.
      this.leader = (await c.query<{ held: boolean }>(this.leader ? q.holdsWebhookLock : q.tryWebhookLock)).rows[0].held;
    } catch (err) {
      this.dropConnection(c);
      throw err;
    }
    if (!this.leader) return null;
    if (Date.now() - this.lastPurge > PURGE_EVERY_MS) {
      this.lastPurge = Date.now();
      await this.pool.query(q.purgeOldWebhookDeliveries);
    }
    const free = PARALLEL_RECEIVERS - this.busy.size;
    if (free <= 0) return 0;
    const due = (await this.pool.query<Due>(q.dueWebhookDeliveries, [ROUND_SIZE, PER_RECEIVER, [...this.busy]])).rows;
    const byReceiver = new Map<string, Due[]>();
    for (const d of due) {
      const list = byReceiver.get(d.user_id);
      if (list) list.push(d); else byReceiver.set(d.user_id, [d]);
    }
    let started = 0;
    for (const [receiver, queue] of [...byReceiver].slice(0, free)) {
      this.busy.add(receiver);
      started += queue.length;
      const lane = (async () => {
        for (const d of queue) {
          if (this.stopping.signal.aborted) return;
          // After a failure the rest waits for the next round: a dead receiver costs one timeout a round.
          if (!(await this.deliver(d))) return;
        }
      })().catch((err: Error) => {
        this.options.log.error({ err }, 'webhook lane failed');
        this.options.onError?.(err);
      }).finally(() => {
        this.busy.delete(receiver);
        this.lanes.delete(lane);
        // The receiver may have more due: look again soon.
        if (!this.stopped && this.leader) this.schedule(0);
      });
      this.lanes.add(lane);
    }
    return started;
  }

  /** One attempt; true when delivered. */
  private async deliver(d: Due): Promise<boolean> {
    const body = JSON.stringify({ id: Number(d.id), type: d.event_type, created_at: d.created_at, ...d.payload });
    const timestampS = Math.floor(Date.now() / 1000);
    let error: string | null = null;
    try {
      const res = await fetch(d.url, {
        method: 'POST',
        body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(this.options.timeoutMs), this.stopping.signal]),
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'telemetry-service-webhooks/1',
          'X-Webhook-Id': d.id,
          'X-Webhook-Event': d.event_type,
          'X-Webhook-Attempt': String(d.attempts + 1),
          [TIMESTAMP_HEADER]: String(timestampS),
          [SIGNATURE_HEADER]: signWebhook(d.secret, timestampS, body),
        },
      });
      // The receiver's body is never read or stored: only its status matters.
      await res.body?.cancel().catch(() => {});
      if (res.status < 200 || res.status > 299) error = `HTTP ${res.status}`;
    } catch (err) {
      // Stopping: the delivery stays due as it was, for the next leader.
      if (this.stopping.signal.aborted) return false;
      const e = err as Error & { cause?: { code?: string } };
      error = e.name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : `${e.cause?.code ?? e.name}: ${e.message}`.slice(0, 300);
    }
    if (error === null) {
      await this.pool.query(q.markWebhookDelivered, [d.id]);
      this.options.onAttempt?.('delivered');
      return true;
    }
    const delayMs = retryDelayMs(d.attempts, this.options.retryBaseMs, this.options.retryMaxMs);
    const res = await this.pool.query<{ gave_up: boolean }>(q.markWebhookRetry, [d.id, delayMs, error, this.options.giveUpH]);
    const gaveUp = res.rows[0]?.gave_up ?? false;
    this.options.onAttempt?.(gaveUp ? 'failed' : 'retry');
    if (gaveUp) this.options.log.warn({ delivery: d.id, event: d.event_type, error }, `webhook delivery given up after ${this.options.giveUpH} h`);
    else this.options.log.debug({ delivery: d.id, attempt: d.attempts + 1, error, retryInMs: delayMs }, 'webhook delivery failed; will retry');
    return false;
  }
}
