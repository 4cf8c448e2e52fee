// The run loop: each device sends a reading every interval (with jitter), retries what the service asks to
// retry (429 backs that device off, 503 and network errors retry later), renews a refused token, and on
// stop clears any flag still raised so its alert resolves.
import type { IngestClient } from './http-client.js';
import type { SimDevice } from './fleet.js';
import { clearingSample, createDeviceState, nextSample, seededRandom, toBody, type DeviceState, type Sample } from './readings.js';

export interface RunStats {
  /** Requests sent and answered (or failed on the network); readings still waiting for a slot are not counted. */
  sent: number;
  ok: number;
  /** Non-200 answers by status; "network" for requests that got no answer. */
  errors: Record<string, number>;
  retried: number;
  /** Readings given up on after MAX_ATTEMPTS (or a 4xx that retrying cannot fix). */
  dropped: number;
  flagsRaised: number;
  flagsCleared: number;
  tokensRenewed: number;
}

export interface RunnerOptions {
  intervalMs: number;
  flagRate: number;
  seed: number | null;
  /** Called on a 401: returns the device with a working token (rotated or re-created). */
  renew(device: SimDevice): Promise<SimDevice>;
  log(message: string): void;
}

const MAX_ATTEMPTS = 5;
const MAX_BACKOFF_MS = 30_000;
const JITTER = 0.2;

interface Slot { device: SimDevice; state: DeviceState; lastAt: number; renewing: Promise<void> | null }

export class FleetRunner {
  readonly stats: RunStats = { sent: 0, ok: 0, errors: {}, retried: 0, dropped: 0, flagsRaised: 0, flagsCleared: 0, tokensRenewed: 0 };
  private stopping = false;
  private wake: (() => void)[] = [];
  private readonly slots: Slot[];
  private readonly rnd: () => number;

  constructor(devices: readonly SimDevice[], private readonly client: IngestClient, private readonly o: RunnerOptions) {
    this.rnd = o.seed === null ? Math.random : seededRandom(o.seed);
    this.slots = devices.map((device, i) => ({
      device, lastAt: 0, renewing: null,
      state: createDeviceState(device.module, i, o.seed === null ? Math.random : seededRandom(o.seed + i + 1)),
    }));
  }

  get devices(): SimDevice[] { return this.slots.map((s) => s.device); }

  /** Runs every device until stop(); then sends the clearing readings of raised flags. */
  async run(): Promise<void> {
    await Promise.all(this.slots.map((slot) => this.loop(slot)));
    await Promise.all(this.slots.map((slot) => this.clearOnStop(slot)));
  }

  stop(): void {
    this.stopping = true;
    this.client.cancelWaiting();
    for (const w of this.wake.splice(0)) w();
  }

  /** Sleeps ms, or less when stop() is called. */
  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => { clearTimeout(timer); resolve(); };
      const timer = setTimeout(() => { this.wake = this.wake.filter((w) => w !== done); resolve(); }, ms);
      this.wake.push(done);
    });
  }

  private jittered(): number {
    return this.o.intervalMs * (1 - JITTER + this.rnd() * 2 * JITTER);
  }

  private async loop(slot: Slot): Promise<void> {
    // Spread the first readings over one interval, so the fleet does not send in lockstep.
    await this.sleep(this.rnd() * this.o.intervalMs);
    slot.lastAt = Date.now();
    while (!this.stopping) {
      const started = Date.now();
      const sample = nextSample(slot.state, started - slot.lastAt || this.o.intervalMs, this.o.flagRate);
      slot.lastAt = started;
      this.countFlag(sample);
      await this.deliver(slot, toBody(sample, started), MAX_ATTEMPTS);
      await this.sleep(Math.max(0, this.jittered() - (Date.now() - started)));
    }
  }

  private countFlag(sample: Sample): void {
    if (sample.flag === 'raised') this.stats.flagsRaised++;
    if (sample.flag === 'cleared') this.stats.flagsCleared++;
  }

  private async clearOnStop(slot: Slot): Promise<void> {
    const sample = clearingSample(slot.state, Math.max(1, Date.now() - slot.lastAt));
    if (!sample) return;
    this.countFlag(sample);
    await this.deliver(slot, toBody(sample, Date.now()), 2, true);
  }

  /** Sends one body, retrying as the answer asks; gives up after `attempts` or when stopping. */
  private async deliver(slot: Slot, body: string, attempts: number, evenWhenStopping = false): Promise<void> {
    let backoffMs = 1000;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const r = await this.client.post(slot.device.token, body);
      if (r.status === -1) return; // stopping: never sent
      this.stats.sent++;
      if (attempt > 1) this.stats.retried++;
      if (r.status === 200) { this.stats.ok++; return; }
      const key = r.status === 0 ? 'network' : String(r.status);
      this.stats.errors[key] = (this.stats.errors[key] ?? 0) + 1;
      if (r.status === 401) {
        await this.renew(slot);
        continue;
      }
      // 4xx other than 401/429: the body itself is refused; sending it again cannot help.
      if (r.status >= 400 && r.status < 500 && r.status !== 429) break;
      if (this.stopping && !evenWhenStopping) break;
      const waitMs = r.retryAfterS !== null ? r.retryAfterS * 1000 : backoffMs;
      backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
      if (evenWhenStopping) await new Promise((res) => setTimeout(res, Math.min(waitMs, 1000)));
      else await this.sleep(waitMs);
      if (this.stopping && !evenWhenStopping) break;
    }
    this.stats.dropped++;
  }

  private async renew(slot: Slot): Promise<void> {
    slot.renewing ??= this.o.renew(slot.device).then((device) => {
      slot.device = device;
      this.stats.tokensRenewed++;
      this.o.log(`device ${device.name} (${device.module}): token refused; now id ${device.id} with a new token`);
    }, (err: unknown) => {
      this.o.log(`could not renew the token of device ${slot.device.name}: ${(err as Error).message}`);
    }).finally(() => { slot.renewing = null; });
    await slot.renewing;
  }
}

/** One line: "sent 1,234 (200: 1,230; 503: 4) ...". */
export function formatStats(s: RunStats): string {
  const errors = Object.entries(s.errors).map(([k, v]) => `${k}: ${v}`).join(', ');
  return `sent ${s.sent}, 200: ${s.ok}, errors: ${errors || 'none'}, retried ${s.retried}, dropped ${s.dropped}, ` +
    `flags raised ${s.flagsRaised} / cleared ${s.flagsCleared}, tokens renewed ${s.tokensRenewed}`;
}
