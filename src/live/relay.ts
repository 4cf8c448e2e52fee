// Live messages across instances (SPEC §8: any instance behind any load balancer). A change is pushed by the
// instance that committed it; its sockets may sit on another. Each instance therefore also sends the messages
// it produces through NOTIFY `live_events`, in batches every FLUSH_MS, and publishes what the others send to
// its own sockets. It does so only while another instance has subscribers (the `live_instances` presence
// table, sql/009), so a single instance, or nobody watching, costs nothing.
import crypto from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import type { Pool } from '../store/db.js';
import { listen, type Listener } from '../store/listener.js';
import * as q from '../store/queries.js';

export interface RelayTarget {
  /** Open sockets on this instance. */
  subscribers(): number;
  /** Publishes a message from another instance to this instance's sockets of that owner (and its admins). */
  deliver(ownerId: number, text: string): void;
}

const FLUSH_MS = 50;
const PRESENCE_MS = 2000;
// NOTIFY payloads must stay under 8000 bytes; a single larger message (a device with hundreds of metrics)
// is left to the instance that produced it.
const MAX_PAYLOAD_BYTES = 7900;

export class LiveRelay {
  private readonly id = crypto.randomUUID();
  private wanted = false;
  private pending: [number, string][] = [];
  private pendingBytes = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly presenceTimer: NodeJS.Timeout;
  private lastCount = 0;
  private readonly listener: Listener;
  private closed = false;

  constructor(private readonly pool: Pool, databaseUrl: string, private readonly target: RelayTarget, private readonly log: Logger) {
    this.listener = listen(databaseUrl, {
      name: 'telemetry-live-relay',
      channels: { [q.LIVE_EVENTS_CHANNEL]: (payload) => this.receive(payload) },
      log: (m) => log.warn(m),
    });
    this.presenceTimer = setInterval(() => void this.presence(), PRESENCE_MS);
    this.presenceTimer.unref();
    void this.presence();
  }

  get ready(): Promise<void> { return this.listener.ready; }

  /** Whether another instance has subscribers: only then are messages serialised and sent. */
  get othersListening(): boolean { return this.wanted; }

  send(ownerId: number, text: string): void {
    if (!this.wanted || this.closed) return;
    const bytes = Buffer.byteLength(text) + 16;
    if (bytes > MAX_PAYLOAD_BYTES) return;
    if (this.pendingBytes + bytes > MAX_PAYLOAD_BYTES) this.flush();
    this.pending.push([ownerId, text]);
    this.pendingBytes += bytes;
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** This instance's first socket opened: announce it now rather than at the next presence round. */
  nudge(): void {
    void this.presence();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.presenceTimer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    await this.listener.close();
    await this.pool.query(q.leaveLiveInstances, [this.id]).catch(() => {});
  }

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.pending.length === 0) return;
    const payload = JSON.stringify({ from: this.id, messages: this.pending });
    this.pending = [];
    this.pendingBytes = 0;
    this.pool.query(q.notifyLiveEvents, [payload]).catch((err) => this.log.warn({ err }, 'live relay: NOTIFY failed; those messages reach only this instance'));
  }

  private receive(payload: string): void {
    let batch: { from: string; messages: [number, string][] };
    try { batch = JSON.parse(payload); } catch { return; }
    if (batch.from === this.id || this.target.subscribers() === 0) return;
    for (const [ownerId, text] of batch.messages) this.target.deliver(ownerId, text);
  }

  /** Announces this instance's subscribers (or leaves when it has none) and learns whether others have any. */
  private async presence(): Promise<void> {
    if (this.closed) return;
    try {
      const count = this.target.subscribers();
      if (count > 0) await this.pool.query(q.announceLiveInstance, [this.id, count]);
      else if (this.lastCount > 0) await this.pool.query(q.leaveLiveInstances, [this.id]);
      this.lastCount = count;
      this.wanted = (await this.pool.query<{ others: boolean }>(q.otherLiveInstances, [this.id])).rows[0].others;
    } catch (err) {
      this.log.warn({ err }, 'live relay: presence update failed');
    }
  }
}
