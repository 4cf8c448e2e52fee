// The offline sweeper (SPEC §4.1 "Liveness"): every interval, the one instance that wins a transaction-level
// advisory lock marks offline the devices silent for longer than their offline_after_s (or OFFLINE_AFTER_S),
// storing one 'offline' module event per transition. The way back online is the ingest transaction's
// (sql/003_ingest_commit.sql stores the 'online' event), so both transitions are written under row locks.
import type { Logger } from '../observability/logger.js';
import { inTransaction, type Pool } from '../store/db.js';
import * as q from '../store/queries.js';

export interface OfflineDevice {
  id: number;
  ownerId: number;
  module: string;
  lastSeenAt: Date;
  offlineAfterS: number;
}

export interface SweeperOptions {
  /** The default timeout, for devices whose offline_after_s is null. */
  offlineAfterS: number;
  intervalMs: number;
  /** The service's clock: the sweep time is passed to SQL, never read from now(), so tests can move it. */
  now: () => number;
  log: Logger;
  /** A periodic sweep failed; it is logged already. */
  onError?: (err: Error) => void;
  /** Devices that went offline in one committed sweep, for live delivery. */
  onOffline?: (devices: OfflineDevice[], atMs: number) => void;
}

/** A row of q.markDevicesOffline. */
interface GoneRow { id: number; owner_id: number; module: string; last_seen_at: Date; offline_after_s: number }

/** Devices marked offline per transaction. */
const SWEEP_CHUNK = 5000;

export class OfflineSweeper {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly pool: Pool, private readonly options: SweeperOptions) {}

  /** Starts the periodic sweep; the first runs one interval from now. The timer never keeps the process alive. */
  start(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for sweeps under way, so the pool can be ended after it. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * One sweep at the clock's current time. Returns how many devices went offline, or null when another
   * instance holds the sweeper lock. Rejects on a database error (the periodic runner catches it).
   */
  sweepOnce(): Promise<number | null> {
    const sweep = this.sweep();
    this.inFlight.add(sweep);
    void sweep.then(() => this.inFlight.delete(sweep), () => this.inFlight.delete(sweep));
    return sweep;
  }

  private async sweep(): Promise<number | null> {
    const atMs = this.options.now();
    let total = 0;
    // In chunks, each its own transaction: after a long outage a whole fleet goes offline without one huge
    // statement running into the statement timeout.
    for (;;) {
      const rows = await inTransaction(this.pool, async (c) => {
        // Transaction-level: released at COMMIT or ROLLBACK, or when the connection dies; it can never be left held.
        const lock = await c.query<{ held: boolean }>(q.trySweeperLock);
        if (!lock.rows[0].held) return null;
        const gone = (await c.query<GoneRow>(
          q.markDevicesOffline, [atMs, this.options.offlineAfterS, SWEEP_CHUNK])).rows;
        // The statement also queued webhook deliveries: wake the dispatcher at COMMIT.
        if (gone.length > 0) await c.query(q.notifyWebhookOutbox);
        return gone;
      });
      if (rows === null) return total > 0 ? total : null;
      total += rows.length;
      if (rows.length > 0) this.report(rows, atMs);
      if (rows.length < SWEEP_CHUNK || this.stopped) return total;
    }
  }

  private report(rows: GoneRow[], atMs: number): void {
    this.options.log.info({ count: rows.length, devices: rows.slice(0, 100).map((r) => r.id) }, 'devices marked offline');
    const devices = rows.map((r) => ({ id: r.id, ownerId: r.owner_id, module: r.module, lastSeenAt: r.last_seen_at, offlineAfterS: r.offline_after_s }));
    try {
      this.options.onOffline?.(devices, atMs);
    } catch (err) {
      this.options.log.error({ err }, 'offline listener failed');
    }
  }

  private tick(): void {
    this.timer = null;
    this.sweepOnce().catch((err: Error) => {
      this.options.log.error({ err }, 'offline sweep failed; retrying at the next interval');
      this.options.onError?.(err);
    }).finally(() => this.start());
  }
}
