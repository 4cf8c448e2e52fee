import crypto from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createUser } from '../dist/src/auth/users.js';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { startTestService, type TestService } from './support/service.js';

// SPEC §4.2 security: where a mobile token is read, when it stops working, and how logins are throttled.
// One service with a hand-moved clock and MOBILE_TOKEN_TTL_DAYS=1.
const DAY_MS = 86_400_000;
const MIN_MS = 60_000;
const PASSWORD = 'correct horse battery';
const LONG_PASSWORD = 'p'.repeat(72); // the longest accepted
const UNAUTHORIZED = { status: 'error', error: 'Invalid or expired access token.' };
const BAD_LOGIN = { status: 'error', error: 'Invalid email or password.' };
const THROTTLED = { status: 'error', error: 'Too many failed logins; try again later.' };
const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

describe('mobile API security: token handling, expiry, revocation, throttling and timing', () => {
  let t: TestService;
  let clock = Date.now();

  const get = async (path: string, authorization?: string) => {
    const res = await fetch(t.baseUrl + path, { headers: authorization === undefined ? {} : { Authorization: authorization } });
    return { status: res.status, headers: res.headers, json: await res.json() as unknown };
  };
  const login = (email: string, password = PASSWORD) => t.post('/api/mobile/login', { email, password });
  const tokenFor = async (email: string, password = PASSWORD) => {
    const r = await login(email, password);
    expect(r.status, r.text).toBe(200);
    return r.json.data.token as string;
  };
  const statuses = (rs: { status: number }[]) => rs.map((r) => r.status);
  const wrongLogins = (n: number, email: string) => Promise.all(Array.from({ length: n }, () => login(email, 'wrong password!')));

  beforeAll(async () => {
    t = await startTestService({ mobileTokenTtlDays: 1 }, { now: () => clock });
    await Promise.all([
      createUser(t.db, 'sec@example.com', PASSWORD, 'user'),
      createUser(t.db, 'gone@example.com', PASSWORD, 'user'),
      createUser(t.db, 'long@example.com', LONG_PASSWORD, 'user'),
    ]);
  });
  afterAll(async () => { await t?.close(); });
  // Each test starts past the 15-minute throttle window of the one before.
  beforeEach(() => { clock += 16 * MIN_MS; });

  it('refuses a token in the query string, as token or access_token', async () => {
    const token = await tokenFor('sec@example.com');
    for (const query of [`token=${token}`, `access_token=${token}`]) {
      const r = await get(`/api/mobile/devices?${query}`);
      expect({ status: r.status, json: r.json }).toEqual({ status: 401, json: UNAUTHORIZED });
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      expect((await t.post(`/api/mobile/logout?${query}`, {})).status).toBe(401);
    }
    expect((await get('/api/mobile/devices', `Bearer ${token}`)).status).toBe(200); // the refused logouts revoked nothing
  });

  it('refuses a device token as a mobile token, and a mobile token at device ingestion', async () => {
    const owner = await t.db.query<{ id: number }>("SELECT id FROM users WHERE email = 'sec@example.com'");
    const device = await createDevice(t.db, owner.rows[0].id, 'sensor', 'home_infra');
    const r = await get('/api/mobile/devices', `Bearer ${device.token}`);
    expect({ status: r.status, json: r.json }).toEqual({ status: 401, json: UNAUTHORIZED });
    const ingest = await t.post('/api/telemetry-ingest', { data: { t: 1 } }, await tokenFor('sec@example.com'));
    expect({ status: ingest.status, json: ingest.json }).toEqual({ status: 401, json: { error: 'Invalid device token.' } });
  });

  it('refuses malformed Authorization values with the same 401', async () => {
    const token = await tokenFor('sec@example.com');
    const malformed = [
      undefined, '', 'Bearer', 'Bearer ', token, `Basic ${token}`, `Token ${token}`, `Bearer  ${token}`, `Bearer\t${token}`,
      `Bearer ${token.toUpperCase()}`, `Bearer ${token.slice(1)}`, `Bearer ${token}0`, `Bearer ${token.slice(0, 63)}g`,
      `Bearer ${sha256(token)}`, `Bearer ${crypto.randomBytes(32).toString('hex')}`, `Bearer ${token},Bearer ${token}`,
      `Bearer ${Buffer.from(token).toString('base64')}`,
    ];
    for (const authorization of malformed) {
      const r = await get('/api/mobile/devices', authorization);
      expect({ authorization, status: r.status, json: r.json }).toEqual({ authorization, status: 401, json: UNAUTHORIZED });
    }
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) expect((await get('/api/mobile/devices', `${scheme} ${token}`)).status).toBe(200);
  });

  it('accepts a token until MOBILE_TOKEN_TTL_DAYS have passed, and refuses it from then on', async () => {
    const issuedAt = clock;
    const token = await tokenFor('sec@example.com');
    const expires = await t.db.query<{ expires_at: Date }>('SELECT expires_at FROM api_access_tokens WHERE token_hash = $1', [sha256(token)]);
    expect(expires.rows[0].expires_at.getTime()).toBe(issuedAt + DAY_MS);
    clock = issuedAt + DAY_MS - 1;
    expect((await get('/api/mobile/devices', `Bearer ${token}`)).status).toBe(200);
    for (const later of [DAY_MS, DAY_MS + 1, 30 * DAY_MS]) {
      clock = issuedAt + later;
      const r = await get('/api/mobile/devices', `Bearer ${token}`);
      expect({ later, status: r.status, json: r.json }).toEqual({ later, status: 401, json: UNAUTHORIZED });
    }
  });

  it('revokes the token used at logout at once, and only that one', async () => {
    const [first, second] = [await tokenFor('sec@example.com'), await tokenFor('sec@example.com')];
    expect((await t.post('/api/mobile/logout', {}, first)).status).toBe(200);
    expect((await get('/api/mobile/devices', `Bearer ${first}`)).status).toBe(401);
    expect((await t.post('/api/mobile/logout', {}, first)).json).toEqual(UNAUTHORIZED);
    expect((await get('/api/mobile/devices', `Bearer ${second}`)).status).toBe(200);
    const rows = await t.db.query<{ token_hash: string; revoked_at: Date | null }>(
      'SELECT token_hash, revoked_at FROM api_access_tokens WHERE token_hash = ANY($1)', [[sha256(first), sha256(second)]]);
    const revoked = Object.fromEntries(rows.rows.map((r) => [r.token_hash, r.revoked_at?.getTime() ?? null]));
    expect(revoked).toEqual({ [sha256(first)]: clock, [sha256(second)]: null });
  });

  it('refuses a disabled user\'s token at once, and their right password at login', async () => {
    const token = await tokenFor('gone@example.com');
    expect((await get('/api/mobile/devices', `Bearer ${token}`)).status).toBe(200);
    await t.db.query("UPDATE users SET disabled_at = now() WHERE email = 'gone@example.com'");
    const r = await get('/api/mobile/devices', `Bearer ${token}`);
    expect({ status: r.status, json: r.json }).toEqual({ status: 401, json: UNAUTHORIZED });
    const again = await login('gone@example.com');
    expect({ status: again.status, json: again.json }).toEqual({ status: 401, json: BAD_LOGIN });
  });

  it('records when a token was last used', async () => {
    const token = await tokenFor('sec@example.com');
    const lastUsed = async () => (await t.db.query<{ last_used_at: Date | null }>(
      'SELECT last_used_at FROM api_access_tokens WHERE token_hash = $1', [sha256(token)])).rows[0].last_used_at?.getTime() ?? null;
    expect(await lastUsed()).toBeNull();
    clock += 5_000;
    expect((await get('/api/mobile/devices', `Bearer ${token}`)).status).toBe(200);
    expect(await lastUsed()).toBe(clock);
  });

  it('refuses a password longer than 72 bytes even when its first 72 bytes are right', async () => {
    const r = await login('long@example.com', `${LONG_PASSWORD}!`);
    expect({ status: r.status, json: r.json }).toEqual({ status: 401, json: BAD_LOGIN });
    expect((await login('long@example.com', LONG_PASSWORD)).status).toBe(200);
  });

  it('answers the 11th failed login for one account within 15 minutes with 429 and Retry-After, even with the right password', async () => {
    for (let i = 1; i <= 10; i++) expect((await login('sec@example.com', 'wrong password!')).status).toBe(401);
    const eleventh = await login('sec@example.com', 'wrong password!');
    expect({ status: eleventh.status, json: eleventh.json }).toEqual({ status: 429, json: THROTTLED });
    expect(eleventh.headers.get('retry-after')).toBe('900');
    for (const email of ['sec@example.com', 'SEC@example.com']) expect((await login(email)).status).toBe(429);
    expect((await login('long@example.com', LONG_PASSWORD)).status).toBe(200); // other accounts from this IP log in
    clock += 15 * MIN_MS - 1;
    const last = await login('sec@example.com');
    expect([last.status, last.headers.get('retry-after')]).toEqual([429, '1']);
    clock += 1; // the window slides past the failures
    expect((await login('sec@example.com')).status).toBe(200);
  });

  it('resets the account\'s count of failures on a successful login', async () => {
    expect(statuses(await wrongLogins(5, 'sec@example.com'))).toEqual(Array(5).fill(401));
    expect((await login('sec@example.com')).status).toBe(200); // without the reset, 5 of the next 10 would get 429
    expect(statuses(await wrongLogins(10, 'sec@example.com'))).toEqual(Array(10).fill(401));
    expect((await login('sec@example.com', 'wrong password!')).status).toBe(429);
  });

  it('counts guesses sent in parallel: of 15 at once, 10 are checked and 5 get 429', async () => {
    const answers = statuses(await wrongLogins(15, 'sec@example.com')).sort();
    expect(answers).toEqual([...Array(10).fill(401), ...Array(5).fill(429)]);
  });

  it('takes about as long to refuse an unknown email as a wrong password', async () => {
    const timed = async (email: string) => {
      const start = performance.now();
      const r = await login(email, 'wrong password!');
      expect(r.status).toBe(401);
      return performance.now() - start;
    };
    await timed('sec@example.com'); // warm-up
    const unknown: number[] = [];
    const wrong: number[] = [];
    for (let i = 0; i < 6; i++) {
      unknown.push(await timed(`nobody${i}@example.com`));
      wrong.push(await timed('sec@example.com'));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const ratio = median(unknown) / median(wrong);
    // bcrypt dominates both (~200 ms); a skipped bcrypt for unknown emails would make the ratio ~0.01.
    expect(ratio, `unknown ${unknown.map(Math.round)} ms, wrong ${wrong.map(Math.round)} ms`).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
    expect(Math.min(...unknown)).toBeLessThan(Math.max(...wrong)); // the ranges overlap
    expect(Math.min(...wrong)).toBeLessThan(Math.max(...unknown));
  });
});
