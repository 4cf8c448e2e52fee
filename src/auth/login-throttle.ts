/**
 * Failed-login throttling per account and per IP over a sliding window (10 failures per 15 minutes per
 * account, 50 per IP by default). Kept in memory per instance: behind a load balancer each instance
 * counts its own share, which bounds guessing at instances x limit.
 */
export interface ThrottleOptions { perAccount: number; perIp: number; windowMs: number }

export const DEFAULT_THROTTLE: ThrottleOptions = { perAccount: 10, perIp: 50, windowMs: 15 * 60_000 };
const MAX_KEYS = 100_000;

/** An attempt counted as a failure until its password proves right. */
export interface LoginAttempt { succeeded(): void }

export class LoginThrottle {
  private failures = new Map<string, number[]>();

  constructor(private readonly opts: ThrottleOptions = DEFAULT_THROTTLE, private readonly now: () => number = Date.now) {}

  private recent(key: string): number[] {
    const cutoff = this.now() - this.opts.windowMs;
    const list = (this.failures.get(key) ?? []).filter((t) => t > cutoff);
    if (list.length === 0) this.failures.delete(key); else this.failures.set(key, list);
    return list;
  }

  /** Seconds to wait before another attempt, or 0 when one is allowed. */
  retryAfterS(account: string, ip: string): number {
    const waits: number[] = [];
    for (const [key, limit] of [[`a:${account.toLowerCase()}`, this.opts.perAccount], [`i:${ip}`, this.opts.perIp]] as const) {
      const list = this.recent(key);
      if (list.length >= limit) waits.push(Math.ceil((list[list.length - limit] + this.opts.windowMs - this.now()) / 1000));
    }
    return waits.length ? Math.max(1, ...waits) : 0;
  }

  recordFailure(account: string, ip: string): void {
    this.record(account, ip);
  }

  recordSuccess(account: string): void {
    this.failures.delete(`a:${account.toLowerCase()}`);
  }

  /**
   * Counts an attempt as failed before its password is checked: bcrypt takes ~200 ms, and checking the
   * limit only afterwards would let a burst of parallel guesses all pass retryAfterS.
   */
  begin(account: string, ip: string): LoginAttempt {
    const at = this.record(account, ip);
    return {
      succeeded: () => {
        this.recordSuccess(account);
        // Take this attempt back from the IP's count; the IP's other failures stand.
        const list = this.failures.get(`i:${ip}`);
        const i = list ? list.lastIndexOf(at) : -1;
        if (i >= 0) list!.splice(i, 1);
      },
    };
  }

  private record(account: string, ip: string): number {
    if (this.failures.size > MAX_KEYS) this.failures.clear(); // bounded memory under a spray of accounts
    const at = this.now();
    for (const key of [`a:${account.toLowerCase()}`, `i:${ip}`]) this.failures.set(key, [...this.recent(key), at]);
    return at;
  }
}
