// Per-user webhooks end to end: a real receiver on loopback, the real service, the outbox written in the ingest
// transaction, HMAC signatures, retries with backoff, one dispatching instance, and the mobile API and CLI.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setWebhook } from '../dist/src/alerts/webhooks.js';
import { verifyWebhook } from '../dist/src/alerts/webhook-signature.js';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { runCli } from './support/cli.js';
import { startTestService, type TestService } from './support/service.js';
import { waitFor } from './support/wait.js';
import { Receiver, type Delivery } from './support/webhook-receiver.js';

const INGEST = '/api/telemetry-ingest';
const PASSWORD = 'correct horse battery';
// Fast polls and retries: the dispatcher's timing is configuration, the behaviour is the same.
const FAST = { webhookPollMs: 50, webhookRetryBaseMs: 50, webhookRetryMaxMs: 200, webhookTimeoutMs: 2000 };

const validSignature = (d: Delivery, secret: string) =>
  verifyWebhook(secret, d.headers['x-webhook-timestamp'] as string, d.headers['x-signature'] as string, d.body);

describe('webhooks', () => {
  let t: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startTestService(FAST);
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  async function userWithWebhook(email: string, role: 'user' | 'admin' = 'user') {
    const user = await createUser(t.db, email, PASSWORD, role);
    const token = (await t.post('/api/mobile/login', { email, password: PASSWORD })).json.data.token as string;
    const set = await fetch(`${t.baseUrl}/api/mobile/webhook`, {
      method: 'PUT', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ url: receiver.url }),
    });
    expect(set.status).toBe(200);
    const { webhook } = (await set.json()).data;
    expect(webhook.secret).toMatch(/^[0-9a-f]{64}$/);
    return { user, token, secret: webhook.secret as string };
  }

  it('delivers an opened alert once more after three failed deliveries, signed, with growing attempts, and then never again', async () => {
    const { user, secret } = await userWithWebhook('hook-owner@example.com');
    const device = await createDevice(t.db, user.id, 'bed 12', 'health');
    const seen = new Map<string, number>();
    // The first three deliveries of every event fail: a 500, a 503, a 404.
    receiver.answer = (d) => {
      const n = (seen.get(d.json.id) ?? 0) + 1;
      seen.set(d.json.id, n);
      return n <= 3 ? [500, 503, 404][n - 1] : 200;
    };

    expect((await t.post(INGEST, { data: { fall_detected: 1 } }, device.token)).status).toBe(200);
    const [alert] = (await t.db.query('SELECT id FROM alerts WHERE device_id = $1', [device.id])).rows;
    expect(await waitFor(() => receiver.of('alert.opened', Number(alert.id)).length >= 4, 5000)).toBe(true);
    await sleep(600); // many more polls and retry windows: nothing more may arrive

    const got = receiver.of('alert.opened', Number(alert.id));
    expect(got).toHaveLength(4);
    expect(got.map((d) => d.headers['x-webhook-attempt'])).toEqual(['1', '2', '3', '4']);
    expect(new Set(got.map((d) => d.json.id)).size).toBe(1);
    for (const d of got) expect(validSignature(d, secret)).toBe(true);
    expect(validSignature(got[3], 'another secret of 32 characters!')).toBe(false);
    expect(got[3].headers['content-type']).toBe('application/json');
    expect(got[3].headers['x-webhook-event']).toBe('alert.opened');
    expect(got[3].json).toMatchObject({
      type: 'alert.opened',
      alert: { id: Number(alert.id), device_id: device.id, metric_name: 'fall_detected', value: 1, severity: 'critical', status: 'open' },
      device: { id: device.id, name: 'bed 12', module: 'health', owner_id: user.id },
    });
    const [row] = (await t.db.query('SELECT attempts, delivered_at, last_error FROM webhook_outbox WHERE id = $1', [got[0].json.id])).rows;
    expect(row).toMatchObject({ attempts: 4, last_error: null });
    expect(row.delivered_at).not.toBeNull();

    // The clearing reading resolves the alert, and that is delivered too (after its own three failures).
    expect((await t.post(INGEST, { data: { fall_detected: 0 } }, device.token)).status).toBe(200);
    expect(await waitFor(() => receiver.of('alert.resolved', Number(alert.id)).length >= 4, 5000)).toBe(true);
    const resolved = receiver.of('alert.resolved', Number(alert.id)).at(-1)!;
    expect(validSignature(resolved, secret)).toBe(true);
    expect(resolved.json.alert.status).toBe('resolved');
    expect(resolved.json.alert.resolved_at).not.toBeNull();
  });

  it("sends a device's events to its owner and the admins, never to another user", async () => {
    receiver.answer = () => 200;
    const owner = await userWithWebhook('hook-a@example.com');
    const other = await userWithWebhook('hook-b@example.com');
    const admin = await userWithWebhook('hook-admin@example.com', 'admin');
    const device = await createDevice(t.db, owner.user.id, 'truck 7', 'vehicle');
    expect((await t.post(INGEST, { data: { impact_detected: 1 } }, device.token)).status).toBe(200);
    const [alert] = (await t.db.query('SELECT id FROM alerts WHERE device_id = $1', [device.id])).rows;
    expect(await waitFor(() => receiver.of('alert.opened', Number(alert.id)).length >= 2, 3000)).toBe(true);
    await sleep(300);
    const rows = (await t.db.query('SELECT user_id FROM webhook_outbox WHERE payload->\'alert\'->>\'id\' = $1 ORDER BY user_id', [String(alert.id)])).rows;
    expect(rows.map((r) => r.user_id)).toEqual([owner.user.id, admin.user.id].sort((a, b) => a - b));
    expect(rows.map((r) => r.user_id)).not.toContain(other.user.id);
    // Each got it signed with their own secret.
    const got = receiver.of('alert.opened', Number(alert.id));
    expect(got).toHaveLength(2);
    expect(got.filter((d) => validSignature(d, owner.secret))).toHaveLength(1);
    expect(got.filter((d) => validSignature(d, admin.secret))).toHaveLength(1);
  });

  it('writes no delivery when the batch that would open the alert fails', async () => {
    const { user } = await userWithWebhook('hook-poison@example.com');
    const device = await createDevice(t.db, user.id, 'bed 13', 'health');
    // Fails the batch at its last step (the latest-values upsert), after the alert and its outbox row were written.
    await t.db.query(`CREATE FUNCTION poison_hook() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'poisoned'; END $$;
      CREATE TRIGGER poison_hook BEFORE INSERT ON latest_metrics FOR EACH ROW EXECUTE FUNCTION poison_hook();`);
    try {
      expect((await t.post(INGEST, { data: { fall_detected: 1 } }, device.token)).status).toBe(503);
    } finally {
      await t.db.query('DROP TRIGGER poison_hook ON latest_metrics; DROP FUNCTION poison_hook();');
    }
    await sleep(200);
    expect((await t.db.query('SELECT count(*)::int AS n FROM alerts WHERE device_id = $1', [device.id])).rows[0].n).toBe(0);
    expect((await t.db.query("SELECT count(*)::int AS n FROM webhook_outbox WHERE payload->'device'->>'id' = $1", [String(device.id)])).rows[0].n).toBe(0);
    expect(receiver.deliveries.filter((d) => d.json.device?.id === device.id)).toHaveLength(0);
  });

  it('delivers a device.offline event when the sweeper marks a device offline', async () => {
    const { user, secret } = await userWithWebhook('hook-offline@example.com');
    const device = await createDevice(t.db, user.id, 'meter 1', 'home_infra');
    expect((await t.post(INGEST, { data: { power_w: 120 } }, device.token)).status).toBe(200);
    await t.db.query("UPDATE devices SET last_seen_at = now() - interval '1 hour' WHERE id = $1", [device.id]);
    expect(await t.service.sweepOnce!()).toBeGreaterThanOrEqual(1);
    expect(await waitFor(() => receiver.deliveries.some((d) => d.json.type === 'device.offline' && d.json.device.id === device.id), 3000)).toBe(true);
    // The owner's copy (the admin of an earlier test gets one too, under their own secret).
    const copies = receiver.deliveries.filter((x) => x.json.type === 'device.offline' && x.json.device.id === device.id);
    const mine = copies.filter((x) => validSignature(x, secret));
    expect(mine).toHaveLength(1);
    const d = mine[0];
    expect(d.json.device).toMatchObject({ name: 'meter 1', module: 'home_infra', status: 'offline', owner_id: user.id });
  });

  it('gives a delivery up once it is older than WEBHOOK_GIVE_UP_H, and tries it no more', async () => {
    const { user } = await userWithWebhook('hook-giveup@example.com');
    const device = await createDevice(t.db, user.id, 'bed 14', 'health');
    receiver.answer = (d) => (d.json.device?.id === device.id ? 500 : 200);
    // Held back while it is aged past the 72 h default, so its very next attempt is its last.
    await t.db.query(`CREATE FUNCTION age_hook() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.created_at := now() - interval '73 hours'; RETURN NEW; END $$;
      CREATE TRIGGER age_hook BEFORE INSERT ON webhook_outbox FOR EACH ROW EXECUTE FUNCTION age_hook();`);
    try {
      expect((await t.post(INGEST, { data: { panic_pressed: 1 } }, device.token)).status).toBe(200);
    } finally {
      await t.db.query('DROP TRIGGER age_hook ON webhook_outbox; DROP FUNCTION age_hook();');
    }
    // One row for the owner and one for the admin of an earlier test.
    const rows = async () => (await t.db.query("SELECT failed_at, attempts, last_error FROM webhook_outbox WHERE payload->'device'->>'id' = $1", [String(device.id)])).rows;
    expect(await waitFor(async () => { const r = await rows(); return r.length === 2 && r.every((x) => x.failed_at != null); }, 3000)).toBe(true);
    await sleep(400);
    for (const row of await rows()) expect(row).toMatchObject({ attempts: 1, last_error: 'HTTP 500' });
    expect(receiver.deliveries.filter((d) => d.json.device?.id === device.id)).toHaveLength(2);
    const m = /^webhook_attempts_total\{outcome="failed"\} (\d+)$/m.exec(await (await fetch(`${t.baseUrl}/metrics`)).text());
    expect(Number(m?.[1])).toBeGreaterThanOrEqual(1);
  });

  it("keeps delivering to other users while one user's receiver never answers", async () => {
    // Accepts the connection, reads the request, never answers: each attempt waits for the whole timeout.
    const silent = http.createServer(() => { /* no answer */ });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const stuck = await createUser(t.db, 'hook-stuck@example.com', PASSWORD, 'user');
      await setWebhook(t.db, stuck.id, `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, 'a-secret-of-enough-length');
      const stuckDevice = await createDevice(t.db, stuck.id, 'stuck 1', 'worker');
      const { user } = await userWithWebhook('hook-unaffected@example.com');
      const device = await createDevice(t.db, user.id, 'fine 1', 'worker');
      receiver.answer = () => 200;
      // The silent receiver's lane is busy for WEBHOOK_TIMEOUT_MS (2 s here) per attempt.
      for (let i = 0; i < 3; i++) {
        await t.post(INGEST, { data: { panic_pressed: 1 } }, stuckDevice.token);
        await t.post(INGEST, { data: { panic_pressed: 0 } }, stuckDevice.token);
      }
      const sentAt = Date.now();
      expect((await t.post(INGEST, { data: { panic_pressed: 1 } }, device.token)).status).toBe(200);
      expect(await waitFor(() => receiver.deliveries.some((d) => d.json.device?.id === device.id), 1500)).toBe(true);
      expect(Date.now() - sentAt).toBeLessThan(1500);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('manages the caller\'s own webhook in the mobile API, refusing bad URLs and secrets with 400 BAD_WEBHOOK', async () => {
    await createUser(t.db, 'hook-api@example.com', PASSWORD, 'user');
    const token = (await t.post('/api/mobile/login', { email: 'hook-api@example.com', password: PASSWORD })).json.data.token as string;
    const call = async (method: string, body?: unknown, path = '/api/mobile/webhook') => {
      const res = await fetch(`${t.baseUrl}${path}`, {
        method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: await res.json() as any };
    };
    expect((await call('GET')).status).toBe(404);
    for (const [body, fragment] of [
      [{}, 'url is required'],
      [{ url: 'ftp://example.com/x' }, 'http or https'],
      [{ url: 'not a url' }, 'absolute http'],
      [{ url: 'https://user:pw@example.com/' }, 'user name or password'],
      [{ url: 'https://example.com/', secret: 'short' }, 'secret must be 16 to 256'],
      [{ url: 'https://example.com/', events: ['x'] }, 'Unknown field "events"'],
      [[1], 'JSON object'],
    ] as const) {
      const r = await call('PUT', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error).toContain(fragment);
    }
    const set = await call('PUT', { url: 'https://example.com/hook', secret: 'a-secret-of-enough-length' });
    expect(set.status).toBe(200);
    expect(set.json.data.webhook).toMatchObject({ url: 'https://example.com/hook', secret: 'a-secret-of-enough-length' });
    const shown = await call('GET');
    expect(shown.json.data.webhook).toMatchObject({ url: 'https://example.com/hook', pending: 0, failed: 0 });
    expect(shown.json.data.webhook.secret).toBeUndefined();
    expect((await call('POST', {}, '/api/mobile/webhook/delete')).status).toBe(200);
    expect((await call('DELETE')).status).toBe(404);
    expect((await call('GET')).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/api/mobile/webhook`)).status).toBe(401);
  });

  it('sets, shows and removes a webhook from the command line', async () => {
    await createUser(t.db, 'hook-cli@example.com', PASSWORD, 'user');
    const env = { DATABASE_URL: t.databaseUrl };
    const set = await runCli(['webhook:set', '--user', 'hook-cli@example.com', '--url', 'https://example.com/cli'], env);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ user: 'hook-cli@example.com', url: 'https://example.com/cli', secret: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const bad = await runCli(['webhook:set', '--user', 'hook-cli@example.com', '--url', 'gopher://x'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--url must use http or https');
    expect(JSON.parse((await runCli(['webhook:show', '--user', 'hook-cli@example.com'], env)).stdout)).toMatchObject({ url: 'https://example.com/cli', pending: 0 });
    expect((await runCli(['webhook:remove', '--user', 'hook-cli@example.com'], env)).code).toBe(0);
    expect((await runCli(['webhook:show', '--user', 'hook-cli@example.com'], env)).stderr).toContain('has no webhook');
  });
});

describe('webhook delivery with two instances', () => {
  let a: TestService;
  let b: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    a = await startTestService(FAST);
    b = await startTestService(FAST, { databaseUrl: a.databaseUrl });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await receiver?.close();
  });

  it('delivers from one instance at a time, each event exactly once, and the other takes over when the first stops', async () => {
    const user = await createUser(a.db, 'hook-two@example.com', PASSWORD, 'user');
    await setWebhook(a.db, user.id, receiver.url, 'a-secret-of-enough-length');
    expect(await waitFor(() => a.service.webhooks!.isLeader !== b.service.webhooks!.isLeader, 3000)).toBe(true);
    const devices = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => createDevice(a.db, user.id, `w${i}`, 'worker')));
    // Half the alerts through each instance.
    await Promise.all(devices.map((d, i) => (i % 2 ? a : b).post(INGEST, { data: { panic_pressed: 1 } }, d.token)));
    expect(await waitFor(() => receiver.of('alert.opened').length >= 6, 3000)).toBe(true);
    await sleep(500);
    expect(receiver.of('alert.opened')).toHaveLength(6);
    expect(new Set(receiver.of('alert.opened').map((d) => d.json.device.id)).size).toBe(6);

    // The leader's lock connection is killed by the server: it must notice at its next round, and the
    // instances settle on one leader again, still delivering each event exactly once.
    await a.db.query(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = 727004 AND granted`);
    await sleep(300);
    expect(await waitFor(() => a.service.webhooks!.isLeader !== b.service.webhooks!.isLeader, 3000)).toBe(true);
    await Promise.all(devices.slice(0, 3).map((d) => a.post(INGEST, { data: { panic_pressed: 0 } }, d.token)));
    expect(await waitFor(() => receiver.of('alert.resolved').length >= 3, 3000)).toBe(true);
    await sleep(500);
    expect(receiver.of('alert.resolved')).toHaveLength(3);

    // The leader stops; the other instance becomes leader and delivers what comes next.
    const [leader, follower] = a.service.webhooks!.isLeader ? [a, b] : [b, a];
    await leader.service.close();
    expect(await waitFor(() => follower.service.webhooks!.isLeader, 3000)).toBe(true);
    await follower.post(INGEST, { data: { panic_pressed: 0 } }, devices[3].token);
    expect(await waitFor(() => receiver.of('alert.resolved').length >= 4, 3000)).toBe(true);
    await sleep(300);
    expect(receiver.of('alert.resolved')).toHaveLength(4);
  });
});
