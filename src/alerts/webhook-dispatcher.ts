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

// A round takes at most this many deliveries; a full round is followed at once by another.
const ROUND_SIZE = 100;
// Receivers handled at once; one receiver's deliveries go one after another, in outbox order.
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
  private running: Promise<unknown> | null = null;
  private again = false;
  private stopped = false;
  private lastPurge = 0;

  constructor(private readonly databaseUrl: string, private readonly pool: Pool, private readonly options: DispatcherOptions) {}

  get isLeader(): boolean { return this.leader; }

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
    const c = this.client;
    this.client = null;
    this.leader = false;
    // Ending the connection releases the session lock for the next leader.
    await c?.end().catch(() => {});
  }

  /**
   * One round now (tests, and every poll): becomes leader if no one is, then delivers what is due. Returns the
   * number of deliveries attempted, or null when another instance is the leader.
   */
  runOnce(): Promise<number | null> {
    if (this.running) { this.again = true; return this.running.then(() => this.runOnce()); }
    const round = this.round();
    this.running = round;
    void round.finally(() => { this.running = null; }).catch(() => {});
    return round;
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
      if (this.client === c) { this.client = null; this.leader = false; }
    });
    c.on('notification', () => { if (this.leader) this.schedule(0); });
    await c.connect();
    await c.query(`LISTEN ${q.WEBHOOK_CHANNEL}`);
    this.client = c;
    return c;
  }

  private async round(): Promise<number | null> {
    if (this.stopped) return null;
    const c = await this.connect();
    if (!this.leader) {
      this.leader = (await c.query<{ held: boolean }>(q.tryWebhookLock)).rows[0].held;
      if (!this.leader) return null;
      this.options.log.info('this instance now delivers webhooks');
    }
    if (Date.now() - this.lastPurge > PURGE_EVERY_MS) {
      this.lastPurge = Date.now();
      await this.pool.query(q.purgeOldWebhookDeliveries);
    }
    const due = (await this.pool.query<Due>(q.dueWebhookDeliveries, [ROUND_SIZE])).rows;
    const byReceiver = new Map<string, Due[]>();
    for (const d of due) {
      const list = byReceiver.get(d.user_id);
      if (list) list.push(d); else byReceiver.set(d.user_id, [d]);
    }
    const queues = [...byReceiver.values()];
    const lanes = Array.from({ length: Math.min(PARALLEL_RECEIVERS, queues.length) }, async () => {
      for (let queue = queues.shift(); queue; queue = queues.shift()) {
        for (const d of queue) await this.deliver(d);
      }
    });
    await Promise.all(lanes);
    return due.length;
  }

  private async deliver(d: Due): Promise<void> {
    const body = JSON.stringify({ id: Number(d.id), type: d.event_type, created_at: d.created_at, ...d.payload });
    const timestampS = Math.floor(Date.now() / 1000);
    let error: string | null = null;
    try {
      const res = await fetch(d.url, {
        method: 'POST',
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
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
      const e = err as Error & { cause?: { code?: string } };
      error = e.name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : `${e.cause?.code ?? e.name}: ${e.message}`.slice(0, 300);
    }
    if (error === null) {
      await this.pool.query(q.markWebhookDelivered, [d.id]);
      this.options.onAttempt?.('delivered');
      return;
    }
    const delayMs = retryDelayMs(d.attempts, this.options.retryBaseMs, this.options.retryMaxMs);
    const res = await this.pool.query<{ gave_up: boolean }>(q.markWebhookRetry, [d.id, delayMs, error, this.options.giveUpH]);
    const gaveUp = res.rows[0]?.gave_up ?? false;
    this.options.onAttempt?.(gaveUp ? 'failed' : 'retry');
    if (gaveUp) this.options.log.warn({ delivery: d.id, event: d.event_type, error }, `webhook delivery given up after ${this.options.giveUpH} h`);
    else this.options.log.debug({ delivery: d.id, attempt: d.attempts + 1, error, retryInMs: delayMs }, 'webhook delivery failed; will retry');
  }
}
