/**
 * Per-device request rate limit over fixed one-second windows. Two maps (this second, and nothing else)
 * keep memory bounded by the devices active in the current second.
 */
export class DeviceRateLimiter {
  private second = -1;
  private counts = new Map<number, number>();

  constructor(private readonly perSecond: number) {}

  /** 0 when the request may pass, else the seconds to wait (for Retry-After). */
  check(deviceId: number, nowMs: number): number {
    if (this.perSecond <= 0) return 0;
    const second = Math.floor(nowMs / 1000);
    if (second !== this.second) { this.second = second; this.counts = new Map(); }
    const n = (this.counts.get(deviceId) ?? 0) + 1;
    this.counts.set(deviceId, n);
    return n > this.perSecond ? 1 : 0;
  }
}
