import { describe, expect, it } from 'vitest';
import { DEFAULT_THROTTLE, LoginThrottle } from './login-throttle.js';

const MIN = 60_000;
const WINDOW = 15 * MIN;

function throttleWithClock() {
  const clock = { ms: Date.UTC(2026, 0, 1) };
  return { clock, throttle: new LoginThrottle(DEFAULT_THROTTLE, () => clock.ms) };
}

/** Fails n logins, each for its own account, from one IP. */
function sprayAccounts(throttle: LoginThrottle, n: number, ip = '192.0.2.1', prefix = 'user') {
  for (let i = 0; i < n; i++) throttle.recordFailure(`${prefix}${i}@example.com`, ip);
}

describe('LoginThrottle', () => {
  it('uses the limits of the spec: 10 per account and 50 per IP in 15 minutes', () => {
    expect(DEFAULT_THROTTLE).toEqual({ perAccount: 10, perIp: 50, windowMs: WINDOW });
  });

  it('allows 9 and 10 failures of one account to be followed by an attempt, and blocks after the 10th', () => {
    const { throttle } = throttleWithClock();
    for (let i = 0; i < 9; i++) throttle.recordFailure('a@example.com', '192.0.2.1');
    expect(throttle.retryAfterS('a@example.com', '192.0.2.1')).toBe(0);
    throttle.recordFailure('a@example.com', '192.0.2.1');
    expect(throttle.retryAfterS('a@example.com', '192.0.2.1')).toBe(900);
    expect(throttle.retryAfterS('A@Example.COM', '198.51.100.7')).toBe(900); // any case, any IP
    expect(throttle.retryAfterS('b@example.com', '192.0.2.1')).toBe(0);
  });

  it('blocks an IP after 50 failures spread over 50 accounts, and not after 49', () => {
    const { throttle } = throttleWithClock();
    sprayAccounts(throttle, 49);
    expect(throttle.retryAfterS('fresh@example.com', '192.0.2.1')).toBe(0);
    sprayAccounts(throttle, 1, '192.0.2.1', 'last');
    expect(throttle.retryAfterS('fresh@example.com', '192.0.2.1')).toBe(900);
    expect(throttle.retryAfterS('fresh@example.com', '192.0.2.2')).toBe(0);
    expect(throttle.retryAfterS('user0@example.com', '192.0.2.2')).toBe(0); // one failure is far below the account limit
  });

  it('slides the window: an attempt is allowed again once the oldest counted failure is 15 minutes old', () => {
    const { clock, throttle } = throttleWithClock();
    for (let i = 0; i < 10; i++) {
      throttle.recordFailure('a@example.com', '192.0.2.1');
      clock.ms += MIN;
    }
    // Failures at minutes 0..9, now minute 10: the first leaves the window at minute 15.
    expect(throttle.retryAfterS('a@example.com', '192.0.2.1')).toBe(5 * 60);
    clock.ms += 5 * MIN - 1;
    expect(throttle.retryAfterS('a@example.com', '192.0.2.1')).toBe(1);
    clock.ms += 1;
    expect(throttle.retryAfterS('a@example.com', '192.0.2.1')).toBe(0);
    throttle.recordFailure('a@example.com', '192.0.2.1');
    expect(throttle.retryAfterS('a@example.com', '192.0.2.1')).toBe(60); // the failure of minute 1 leaves at 16
  });

  it('slides the per-IP window too', () => {
    const { clock, throttle } = throttleWithClock();
    sprayAccounts(throttle, 50);
    clock.ms += WINDOW - 1;
    expect(throttle.retryAfterS('fresh@example.com', '192.0.2.1')).toBe(1);
    clock.ms += 1;
    expect(throttle.retryAfterS('fresh@example.com', '192.0.2.1')).toBe(0);
  });

  it('resets the account on a success, but keeps the IP count', () => {
    const { throttle } = throttleWithClock();
    for (let i = 0; i < 9; i++) throttle.recordFailure('a@example.com', '192.0.2.1');
    sprayAccounts(throttle, 40);
    throttle.recordSuccess('A@example.com');
    for (let i = 0; i < 9; i++) throttle.recordFailure('a@example.com', '192.0.2.1');
    expect(throttle.retryAfterS('a@example.com', '192.0.2.2')).toBe(0);
    throttle.recordFailure('a@example.com', '192.0.2.2');
    expect(throttle.retryAfterS('a@example.com', '192.0.2.2')).toBe(900);
    expect(throttle.retryAfterS('other@example.com', '192.0.2.1')).toBe(900); // 9 + 40 + 9 = 58 from that IP
  });

  it('counts an attempt begun but not yet checked, so parallel guesses cannot outrun the limit', () => {
    const { throttle } = throttleWithClock();
    const allowed = [];
    for (let i = 0; i < 15; i++) {
      if (throttle.retryAfterS('a@example.com', '192.0.2.1') === 0) allowed.push(throttle.begin('a@example.com', '192.0.2.1'));
    }
    expect(allowed).toHaveLength(10);
  });

  it('takes a successful attempt back from both counts', () => {
    const { throttle } = throttleWithClock();
    sprayAccounts(throttle, 49);
    for (let i = 0; i < 5; i++) throttle.begin('a@example.com', '192.0.2.1').succeeded();
    expect(throttle.retryAfterS('fresh@example.com', '192.0.2.1')).toBe(0); // still 49 from that IP
    for (let i = 0; i < 9; i++) throttle.begin('a@example.com', '192.0.2.9');
    throttle.begin('a@example.com', '192.0.2.9').succeeded();
    for (let i = 0; i < 9; i++) throttle.begin('a@example.com', '192.0.2.9');
    expect(throttle.retryAfterS('a@example.com', '192.0.2.8')).toBe(0); // the success cleared the first nine
  });
});
