import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

// Behind one load balancer every socket comes from the balancer; TRUST_PROXY=1 throttles by the client address
// the balancer appended to X-Forwarded-For, so one noisy client does not lock out everyone else.
describe('login throttling behind a trusted proxy', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService({ trustProxy: true }); });
  afterAll(async () => { await t?.close(); });

  const login = (email: string, forwardedFor: string) =>
    t.post('/api/mobile/login', { email, password: 'not the password' }, undefined, { 'X-Forwarded-For': forwardedFor });

  it('counts failures per forwarded client address, not per balancer', async () => {
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => login(`nobody${round * 10 + i}@example.com`, 'spoofed, 192.0.2.7')));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(401));
    }
    const blocked = await login('someone@example.com', 'spoofed, 192.0.2.7');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another client behind the same balancer, and a spoofed first entry, are not affected.
    expect((await login('someone@example.com', '192.0.2.8')).status).toBe(401);
    expect((await login('someone@example.com', '192.0.2.7, 192.0.2.9')).status).toBe(401);
  });
});
