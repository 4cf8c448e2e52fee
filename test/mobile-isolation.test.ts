import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../dist/src/auth/users.js';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { startTestService, type TestService } from './support/service.js';

// SPEC §4.2 and issue 3 "Tenant isolation": another user's device or alert is a 404, never a 403 and never
// its data; responses and the database never hold a raw secret.
const PASSWORD = { alice: 'alice horse battery', bob: 'bob staple battery', root: 'root staple horse' };
const NOT_FOUND = { status: 'error', error: 'Not found.' };
const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

describe('tenant isolation on the mobile API', () => {
  let t: TestService;
  const user = { alice: 0, bob: 0, root: 0 };
  const token = { alice: '', bob: '', root: '' };
  let aliceDevice: { id: number; token: string };
  let bobDevice: { id: number; token: string };

  const get = async (path: string, bearer: string) => {
    const res = await fetch(t.baseUrl + path, { headers: { Authorization: `Bearer ${bearer}` } });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text) };
  };
  const call = (method: 'GET' | 'POST', path: string, bearer: string) =>
    method === 'GET' ? get(path, bearer) : t.post(path, {}, bearer);
  /** Every mobile endpoint that names a device or alert id, with valid query parameters. */
  const endpoints = (id: string | number): ['GET' | 'POST', string][] => [
    ['GET', `/api/mobile/devices/${id}`],
    ['GET', `/api/mobile/devices/${id}/telemetry?metric=alice_secret&from=2025-06-01T00:00:00Z&to=2025-06-02T00:00:00Z&bucket=1h`],
    ['GET', `/api/mobile/devices/${id}/telemetry`], // no metric: still 404 first, so a 400 cannot reveal the device
    ['GET', `/api/mobile/devices/${id}/gps?from=2025-06-01T00:00:00Z&to=2025-06-02T00:00:00Z`],
    ['GET', `/api/mobile/devices/${id}/gps?from=nonsense`],
    ['POST', `/api/mobile/alerts/${id}/acknowledge`],
  ];

  beforeAll(async () => {
    t = await startTestService();
    [user.alice, user.bob, user.root] = (await Promise.all([
      createUser(t.db, 'alice@example.com', PASSWORD.alice, 'user'),
      createUser(t.db, 'bob@example.com', PASSWORD.bob, 'user'),
      createUser(t.db, 'root@example.com', PASSWORD.root, 'admin'),
    ])).map((u) => u.id);
    aliceDevice = await createDevice(t.db, user.alice, 'alice bedside monitor', 'health');
    bobDevice = await createDevice(t.db, user.bob, 'bob delivery van', 'vehicle');
    const reading = { data: { alice_secret: 4242 }, gps: { lat: 51.5, lng: -0.12 }, recorded_at: '2025-06-01 10:00:00' };
    expect((await t.post('/api/telemetry-ingest', reading, aliceDevice.token)).status).toBe(200);
    expect((await t.post('/api/telemetry-ingest', { data: { speed: 50 } }, bobDevice.token)).status).toBe(200);
    for (const who of ['alice', 'bob', 'root'] as const) {
      const login = await t.post('/api/mobile/login', { email: `${who}@example.com`, password: PASSWORD[who] });
      expect(login.status).toBe(200);
      token[who] = login.json.data.token;
    }
  });
  afterAll(async () => { await t?.close(); });

  it('lists only the user\'s own devices, and every device to an admin', async () => {
    const ids = async (bearer: string) => (await get('/api/mobile/devices', bearer)).json.data.devices.map((d: { id: number }) => d.id);
    expect(await ids(token.alice)).toEqual([aliceDevice.id]);
    expect(await ids(token.bob)).toEqual([bobDevice.id]);
    expect(await ids(token.root)).toEqual([aliceDevice.id, bobDevice.id]);
  });

  it('answers 404 on every endpoint when a user names another user\'s device, and never with its data', async () => {
    for (const [method, path] of endpoints(aliceDevice.id)) {
      const r = await call(method, path, token.bob);
      expect({ path, status: r.status, json: r.json }).toEqual({ path, status: 404, json: NOT_FOUND });
      expect(r.text).not.toMatch(/alice|4242|51\.5/);
    }
  });

  it('answers the owner and an admin with the device\'s data on the same endpoints', async () => {
    for (const bearer of [token.alice, token.root]) {
      const [detail, telemetry, noMetric, gps, badGps, ack] = await Promise.all(endpoints(aliceDevice.id).map(([m, p]) => call(m, p, bearer)));
      expect(detail.status).toBe(200);
      expect(detail.json.data.device).toMatchObject({ id: aliceDevice.id, name: 'alice bedside monitor', latest: { alice_secret: { value: 4242 } } });
      expect(telemetry.json.data.points).toEqual([{ t: '2025-06-01T10:00:00.000Z', avg: 4242, min: 4242, max: 4242, count: 1 }]);
      expect(noMetric.status).toBe(400);
      expect(gps.json.data.points).toMatchObject([{ t: '2025-06-01T10:00:00.000Z', lat: 51.5, lng: -0.12 }]);
      expect(badGps.status).toBe(400);
      expect(ack.json).toEqual(NOT_FOUND); // no alerts exist until the alert engine lands
    }
  });

  it('answers 404 for ids that are not plain positive integers, do not exist or are too large', async () => {
    const id = aliceDevice.id;
    // Each of these would reach alice's device under a lenient parse (parseInt, Number, a float).
    const lookalikes = [`${id}abc`, `0${id}`, `+${id}`, `${id}.0`, `${id}e0`, `%20${id}`, `0x${id.toString(16)}`];
    const others = ['0', '-1', 'abc', '999999999', '9007199254740993', '99999999999999999999', '1'.repeat(400)];
    for (const bad of [...lookalikes, ...others]) {
      for (const [method, path] of endpoints(bad)) {
        const r = await call(method, path, token.alice);
        expect({ path, status: r.status, json: r.json }).toEqual({ path, status: 404, json: NOT_FOUND });
      }
    }
  });

  it('never answers an id beyond 2^53 with the device that id would round to', async () => {
    const big = 2 ** 53; // 9007199254740992; "9007199254740993" rounds to it as a JavaScript number
    await t.db.query(
      "INSERT INTO devices (id, owner_id, name, module, api_token_hash) VALUES ($1, $2, 'far away', 'health', $3)",
      [String(big), user.bob, sha256('far away')],
    );
    const r = await get('/api/mobile/devices/9007199254740993', token.bob);
    expect({ status: r.status, json: r.json }).toEqual({ status: 404, json: NOT_FOUND });
  });

  it('returns no password hash, token hash or raw token in any response', async () => {
    const { rows } = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [user.alice]);
    const secrets = [aliceDevice.token, sha256(aliceDevice.token), token.alice, sha256(token.alice), rows[0].password_hash, PASSWORD.alice];
    for (const bearer of [token.alice, token.root]) {
      for (const path of ['/api/mobile/devices', `/api/mobile/devices/${aliceDevice.id}`, '/api/mobile/alerts']) {
        const r = await get(path, bearer);
        expect(r.status).toBe(200);
        for (const secret of secrets) expect(r.text).not.toContain(secret);
        expect(r.text).not.toMatch(/hash|token|password/i);
      }
    }
  });

  it('stores no raw token and no password in any text column, only the SHA-256 of each mobile token', async () => {
    const secrets = [...Object.values(token), aliceDevice.token, bobDevice.token, ...Object.values(PASSWORD), 'test-admin-password'];
    const { rows: columns } = await t.db.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type IN ('text', 'character', 'character varying')`);
    expect(columns.map((c) => `${c.table_name}.${c.column_name}`)).toEqual(expect.arrayContaining(['api_access_tokens.token_hash', 'users.password_hash', 'devices.api_token_hash']));
    const found: string[] = [];
    for (const c of columns) {
      const sql = `SELECT count(*)::int AS n FROM "${c.table_name}" WHERE strpos(lower("${c.column_name}"::text), lower($1)) > 0`;
      for (const secret of secrets) {
        if ((await t.db.query<{ n: number }>(sql, [secret])).rows[0].n > 0) found.push(`${c.table_name}.${c.column_name}`);
      }
    }
    expect(found).toEqual([]);
    const stored = await t.db.query<{ token_hash: string }>('SELECT token_hash FROM api_access_tokens ORDER BY id');
    expect(stored.rows.map((r) => r.token_hash)).toEqual([sha256(token.alice), sha256(token.bob), sha256(token.root)]);
  });
});
