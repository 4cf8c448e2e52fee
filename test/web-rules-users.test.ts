// The dashboard's alert rule pages and the admin's users page over real HTTP, with the stored rows checked:
// create, edit and delete rules (and what a user may not touch), and create, disable, enable and re-role users.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser, setUserRole } from '../dist/src/auth/users.js';
import { startTestService, type TestService } from './support/service.js';
import { get, logIn, postForm, type LoggedIn } from './support/web-client.js';

const PASSWORD = 'correct horse battery';
const ADMIN = { email: 'admin@test.local', password: 'test-admin-password' };

let t: TestService;
beforeAll(async () => { t = await startTestService(); });
afterAll(async () => { await t?.close(); });

const ruleRow = async (id: number) => (await t.db.query(
  `SELECT owner_id, module, device_id, metric_name, operator, threshold, clear_threshold, for_count, severity, enabled
     FROM alert_rules WHERE id = $1`, [id])).rows[0];
const ruleCount = async () => (await t.db.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n as number;
const ruleIds = (page: string) => [...page.matchAll(/<tr data-rule-id="(\d+)"/g)].map((m) => Number(m[1]));
/** The form without one of its fields (an unticked checkbox is not sent at all). */
const without = (form: Record<string, string>, field: string) => Object.fromEntries(Object.entries(form).filter(([k]) => k !== field));
const FORM = {
  metric_name: 'heart_rate', operator: '>', threshold: '120', clear_threshold: '110', for_count: '3', severity: 'critical',
  module: 'health', device_id: '', enabled: '1',
};

describe('dashboard alert rules', () => {
  let alice: LoggedIn;
  let bob: LoggedIn;
  let admin: LoggedIn;
  let aliceId: number;
  let bobDevice: number;
  let aliceDevice: number;
  let globalId: number;
  beforeAll(async () => {
    aliceId = (await createUser(t.db, 'alice@example.com', PASSWORD, 'user')).id;
    const bobId = (await createUser(t.db, 'bob@example.com', PASSWORD, 'user')).id;
    aliceDevice = (await createDevice(t.db, aliceId, 'alice-pendant', 'health')).id;
    bobDevice = (await createDevice(t.db, bobId, 'bob-pendant', 'health')).id;
    alice = await logIn(t.baseUrl, 'alice@example.com', PASSWORD);
    bob = await logIn(t.baseUrl, 'bob@example.com', PASSWORD);
    admin = await logIn(t.baseUrl, ADMIN.email, ADMIN.password);
    globalId = Number((await t.db.query("SELECT id FROM alert_rules WHERE owner_id IS NULL AND metric_name = 'fall_detected'")).rows[0].id);
  });
  const post = (s: LoggedIn, path: string, form: Record<string, string>) =>
    postForm(`${t.baseUrl}${path}`, { _csrf: s.csrf, ...form }, { cookie: s.cookie });
  const create = async (s: LoggedIn, form: Record<string, string>) => {
    const r = await post(s, '/rules', form);
    expect([r.status, r.headers.location, r.status === 303 ? '' : r.text.slice(0, 500)]).toEqual([303, '/rules', '']);
    return Number((await t.db.query('SELECT max(id) AS id FROM alert_rules')).rows[0].id);
  };

  it('creates a rule of the user from the form and stores every field', async () => {
    const id = await create(alice, { ...FORM, device_id: String(aliceDevice) });
    expect(await ruleRow(id)).toEqual({
      owner_id: aliceId, module: 'health', device_id: aliceDevice, metric_name: 'heart_rate', operator: '>', threshold: 120,
      clear_threshold: 110, for_count: 3, severity: 'critical', enabled: true,
    });
    // An unticked checkbox is not sent: the rule is created disabled; empty optional fields mean none.
    const off = await create(alice, without({ ...FORM, clear_threshold: '', module: '', for_count: '' }, 'enabled'));
    expect(await ruleRow(off)).toMatchObject({ module: null, device_id: null, clear_threshold: null, for_count: 1, enabled: false });
  });

  it('lists the global rules read-only and the own rules with edit links, never another user\'s rule; an admin sees and manages all', async () => {
    const bobs = await create(bob, { ...FORM, metric_name: 'bob_metric' });
    const own = await create(alice, { ...FORM, metric_name: 'alice_metric' });
    const page = (await get(`${t.baseUrl}/rules`, { cookie: alice.cookie })).text;
    expect(ruleIds(page)).toContain(globalId);
    expect(ruleIds(page)).toContain(own);
    expect(ruleIds(page)).not.toContain(bobs);
    expect(page).not.toContain('bob_metric');
    expect(page).toContain(`href="/rules/${own}/edit"`);
    expect(page).not.toContain(`href="/rules/${globalId}/edit"`);
    expect(page).toMatch(new RegExp(`data-rule-id="${globalId}"[^]*?read-only[^]*?</tr>`));
    const adminPage = (await get(`${t.baseUrl}/rules`, { cookie: admin.cookie })).text;
    expect(ruleIds(adminPage)).toEqual(expect.arrayContaining([globalId, own, bobs]));
    expect(adminPage).toContain(`href="/rules/${globalId}/edit"`);
    expect(adminPage).toContain(`href="/rules/${bobs}/delete"`);
  });

  it('re-renders the form with 400 and the reason for invalid input, keeps what was typed (escaped), and stores nothing', async () => {
    const before = await ruleCount();
    const cases: [Record<string, string>, string][] = [
      [{ threshold: 'abc' }, 'Threshold must be a finite number; got &quot;abc&quot;.'],
      [{ metric_name: 'heart <rate>' }, 'Metric name must be 1 to 64 characters from A-Z a-z 0-9 _ . : / -; got &quot;heart &lt;rate&gt;&quot;.'],
      [{ clear_threshold: '130' }, 'Clear threshold (130) must be at or below Threshold (120) for &gt;'],
      [{ operator: '=~' }, 'Operator must be one of'],
      [{ for_count: '0' }, 'Consecutive readings must be a whole number from 1 to 1000; got 0.'],
      [{ severity: 'panic' }, 'Severity must be one of info, warning, critical; got &quot;panic&quot;.'],
      [{ device_id: String(bobDevice) }, `Device id ${bobDevice} names no device of yours.`],
      [{ module: 'vehicle', device_id: String(aliceDevice) }, `Device ${aliceDevice} is a health device`],
    ];
    for (const [change, message] of cases) {
      const r = await post(alice, '/rules', { ...FORM, ...change });
      expect({ change, status: r.status }).toEqual({ change, status: 400 });
      expect(r.text).toContain(message);
      expect(r.text).toContain('<form method="post" action="/rules"');
    }
    const r = await post(alice, '/rules', { ...FORM, metric_name: 'heart <rate>' });
    expect(r.text).toContain('value="heart &lt;rate&gt;"');
    expect(await ruleCount()).toBe(before);
  });

  it('edits the own rule through the form, with the stored values shown first', async () => {
    const id = await create(alice, FORM);
    const form = await get(`${t.baseUrl}/rules/${id}/edit`, { cookie: alice.cookie });
    expect(form.status).toBe(200);
    expect(form.text).toContain('value="heart_rate"');
    expect(form.text).toContain('<option value="critical" selected>');
    expect(form.text).toContain(`action="/rules/${id}"`);
    const r = await post(alice, `/rules/${id}`, without({ ...FORM, threshold: '125.5', clear_threshold: '', severity: 'warning' }, 'enabled'));
    expect([r.status, r.headers.location]).toEqual([303, '/rules']);
    expect(await ruleRow(id)).toMatchObject({ owner_id: aliceId, threshold: 125.5, clear_threshold: null, severity: 'warning', enabled: false });
    const bad = await post(alice, `/rules/${id}`, { ...FORM, threshold: '' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Threshold must be a finite number; got &quot;&quot;.');
    expect((await ruleRow(id)).threshold).toBe(125.5);
  });

  it('refuses a user every change of a global rule (403) and of another user\'s rule (404), and changes nothing', async () => {
    const bobs = await create(bob, { ...FORM, metric_name: 'bob_secret' });
    const [globalBefore, bobsBefore] = [await ruleRow(globalId), await ruleRow(bobs)];
    for (const path of [`/rules/${globalId}/edit`, `/rules/${globalId}/delete`]) {
      const r = await get(`${t.baseUrl}${path}`, { cookie: alice.cookie });
      expect([path, r.status]).toEqual([path, 403]);
      expect(r.text).toContain('is a global rule: only an admin may');
    }
    expect((await post(alice, `/rules/${globalId}`, { ...FORM, metric_name: 'fall_detected', operator: '==', threshold: '0' })).status).toBe(403);
    expect((await post(alice, `/rules/${globalId}/delete`, {})).status).toBe(403);
    for (const path of [`/rules/${bobs}/edit`, `/rules/${bobs}/delete`, '/rules/99999/edit', '/rules/abc/edit']) {
      expect([path, (await get(`${t.baseUrl}${path}`, { cookie: alice.cookie })).status]).toEqual([path, 404]);
    }
    const edit = await post(alice, `/rules/${bobs}`, FORM);
    expect(edit.status).toBe(404);
    expect(edit.text).not.toContain('bob_secret');
    expect((await post(alice, `/rules/${bobs}/delete`, {})).status).toBe(404);
    expect(await ruleRow(globalId)).toEqual(globalBefore);
    expect(await ruleRow(bobs)).toEqual(bobsBefore);
  });

  it('deletes a rule after a confirmation page, with the alerts it opened', async () => {
    const id = await create(alice, { ...FORM, metric_name: 'doomed', clear_threshold: '' });
    await t.db.query("INSERT INTO alerts (rule_id, device_id, metric_name, value, severity, opened_at) VALUES ($1, $2, 'doomed', 130, 'critical', now())", [id, aliceDevice]);
    const confirm = await get(`${t.baseUrl}/rules/${id}/delete`, { cookie: alice.cookie });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`<form method="post" action="/rules/${id}/delete">`);
    expect(confirm.text).toContain(`name="_csrf" value="${alice.csrf}"`);
    expect(await ruleRow(id)).toBeDefined(); // the GET deletes nothing
    const r = await post(alice, `/rules/${id}/delete`, {});
    expect([r.status, r.headers.location]).toEqual([303, '/rules']);
    expect(await ruleRow(id)).toBeUndefined();
    expect((await t.db.query('SELECT count(*)::int AS n FROM alerts WHERE rule_id = $1', [id])).rows[0].n).toBe(0);
  });

  it('lets an admin create a global rule and edit a global default; a user\'s form has no such choice', async () => {
    expect((await get(`${t.baseUrl}/rules/new`, { cookie: alice.cookie })).text).not.toContain('name="scope"');
    const id = await create(admin, { ...FORM, metric_name: 'site_temp', scope: 'global' });
    expect((await ruleRow(id)).owner_id).toBeNull();
    const r = await post(admin, `/rules/${globalId}`, { metric_name: 'fall_detected', operator: '==', threshold: '1', severity: 'warning', for_count: '2', enabled: '1' });
    expect(r.status).toBe(303);
    expect(await ruleRow(globalId)).toMatchObject({ owner_id: null, severity: 'warning', for_count: 2, enabled: true });
  });

  it('refuses rule forms without a valid CSRF token with 403, and stores nothing', async () => {
    const before = await ruleCount();
    for (const csrf of ['', 'nope', bob.csrf]) {
      const r = await postForm(`${t.baseUrl}/rules`, { ...FORM, _csrf: csrf }, { cookie: alice.cookie });
      expect(r.status).toBe(403);
      expect(r.text).toContain('This form has expired');
    }
    expect((await postForm(`${t.baseUrl}/rules/${globalId}/delete`, { _csrf: alice.csrf }, { cookie: admin.cookie })).status).toBe(403);
    expect(await ruleCount()).toBe(before);
  });
});

describe('dashboard users (admins only)', () => {
  let admin: LoggedIn;
  let carol: LoggedIn;
  let carolId: number;
  const userRow = async (email: string) =>
    (await t.db.query('SELECT id, role, disabled_at FROM users WHERE lower(email) = lower($1)', [email])).rows[0];
  const post = (s: LoggedIn, path: string, form: Record<string, string> = {}) =>
    postForm(`${t.baseUrl}${path}`, { _csrf: s.csrf, ...form }, { cookie: s.cookie });
  const status = async (s: LoggedIn, path: string) => {
    const r = await get(`${t.baseUrl}${path}`, { cookie: s.cookie });
    return r.status === 303 ? `303 ${r.headers.location}` : String(r.status);
  };
  beforeAll(async () => {
    carolId = (await createUser(t.db, 'carol@example.com', PASSWORD, 'user')).id;
    admin = await logIn(t.baseUrl, ADMIN.email, ADMIN.password);
    carol = await logIn(t.baseUrl, 'carol@example.com', PASSWORD);
  });

  it('answers 404 to a non-admin for every /users route, changes nothing, and shows no Users link', async () => {
    const adminId = (await userRow(ADMIN.email)).id;
    expect(await status(carol, '/users')).toBe('404');
    expect((await post(carol, '/users', { email: 'sneaky@example.com', password: PASSWORD, role: 'admin' })).status).toBe(404);
    expect((await post(carol, `/users/${carolId}/role`, { role: 'admin' })).status).toBe(404);
    expect((await post(carol, `/users/${adminId}/disable`)).status).toBe(404);
    expect((await post(carol, `/users/${adminId}/enable`)).status).toBe(404);
    expect(await userRow('sneaky@example.com')).toBeUndefined();
    expect(await userRow('carol@example.com')).toMatchObject({ role: 'user', disabled_at: null });
    expect(await userRow(ADMIN.email)).toMatchObject({ role: 'admin', disabled_at: null });
    expect((await get(`${t.baseUrl}/alerts`, { cookie: carol.cookie })).text).not.toContain('href="/users"');
    expect((await get(`${t.baseUrl}/alerts`, { cookie: admin.cookie })).text).toContain('href="/users"');
  });

  it('lists the users with role, created and disabled, escaped, and never a password hash', async () => {
    await createUser(t.db, 'o\'brien+<x>@example.com', PASSWORD, 'user');
    const page = await get(`${t.baseUrl}/users`, { cookie: admin.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('o&#39;brien+&lt;x&gt;@example.com');
    expect(page.text).toMatch(/data-user-id="\d+"[^]*?carol@example\.com[^]*?user[^]*?<time datetime="/);
    expect(page.text).not.toContain('$2');
  });

  it('creates a user from the form, who can then log in; refuses a duplicate or a short password with 400 and the reason', async () => {
    const r = await post(admin, '/users', { email: 'dan@example.com', password: PASSWORD, role: 'admin' });
    expect([r.status, r.headers.location]).toEqual([303, '/users']);
    expect(await userRow('dan@example.com')).toMatchObject({ role: 'admin', disabled_at: null });
    await logIn(t.baseUrl, 'dan@example.com', PASSWORD);
    const dup = await post(admin, '/users', { email: 'DAN@example.com', password: PASSWORD, role: 'user' });
    expect(dup.status).toBe(400);
    expect(dup.text).toContain('A user with email DAN@example.com already exists.');
    expect(dup.text).toContain('value="DAN@example.com"');
    const short = await post(admin, '/users', { email: 'erin@example.com', password: 'short', role: 'user' });
    expect(short.status).toBe(400);
    expect(short.text).toMatch(/class="error" role="alert">[^<]*8/);
    const role = await post(admin, '/users', { email: 'erin@example.com', password: PASSWORD, role: 'root' });
    expect(role.status).toBe(400);
    expect(await userRow('erin@example.com')).toBeUndefined();
  });

  it('disables a user: their open session stops working at once and their app token too; enabling lets them log in again', async () => {
    const frank = await createUser(t.db, 'frank@example.com', PASSWORD, 'user');
    const session = await logIn(t.baseUrl, 'frank@example.com', PASSWORD);
    const token = (await t.post('/api/mobile/login', { email: 'frank@example.com', password: PASSWORD })).json.data.token as string;
    expect(await status(session, '/alerts')).toBe('200');
    const r = await post(admin, `/users/${frank.id}/disable`);
    expect([r.status, r.headers.location]).toEqual([303, '/users']);
    expect((await userRow('frank@example.com')).disabled_at).toBeInstanceOf(Date);
    expect((await t.db.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [frank.id])).rows[0].n).toBe(0);
    expect(await status(session, '/alerts')).toBe('303 /login');
    expect((await t.get('/api/mobile/devices', token)).status).toBe(401);
    await expect(logIn(t.baseUrl, 'frank@example.com', PASSWORD)).rejects.toThrow(/401/);
    expect((await get(`${t.baseUrl}/users`, { cookie: admin.cookie })).text).toMatch(new RegExp(`data-user-id="${frank.id}" class="disabled"[^]*?action="/users/${frank.id}/enable"`));

    expect((await post(admin, `/users/${frank.id}/enable`)).status).toBe(303);
    expect((await userRow('frank@example.com')).disabled_at).toBeNull();
    expect(await status(await logIn(t.baseUrl, 'frank@example.com', PASSWORD), '/alerts')).toBe('200');
  });

  it('changes a role, effective on the user\'s open session at once', async () => {
    const gina = await createUser(t.db, 'gina@example.com', PASSWORD, 'user');
    const session = await logIn(t.baseUrl, 'gina@example.com', PASSWORD);
    expect(await status(session, '/users')).toBe('404');
    expect((await post(admin, `/users/${gina.id}/role`, { role: 'admin' })).status).toBe(303);
    expect((await userRow('gina@example.com')).role).toBe('admin');
    expect(await status(session, '/users')).toBe('200');
    expect((await post(admin, `/users/${gina.id}/role`, { role: 'user' })).status).toBe(303);
    expect(await status(session, '/users')).toBe('404');
    expect((await post(admin, `/users/${gina.id}/role`, { role: 'superuser' })).status).toBe(400);
    expect((await userRow('gina@example.com')).role).toBe('user');
    expect((await post(admin, '/users/99999/role', { role: 'admin' })).status).toBe(404);
  });

  it('refuses an admin disabling or demoting themselves with a message page, and changes nothing', async () => {
    const me = (await userRow(ADMIN.email)).id;
    const demote = await post(admin, `/users/${me}/role`, { role: 'user' });
    expect(demote.status).toBe(409);
    expect(demote.text).toContain('You cannot remove your own admin role; another admin can.');
    const disable = await post(admin, `/users/${me}/disable`);
    expect(disable.status).toBe(409);
    expect(disable.text).toContain('You cannot disable your own account; another admin can.');
    expect(await userRow(ADMIN.email)).toMatchObject({ role: 'admin', disabled_at: null });
    expect(await status(admin, '/users')).toBe('200');
  });

  it('never leaves the service without an enabled admin, even when two admins demote each other at once', async () => {
    const a = await createUser(t.db, 'duel-a@example.com', PASSWORD, 'admin');
    const b = await createUser(t.db, 'duel-b@example.com', PASSWORD, 'admin');
    // Only these two are admins now.
    await t.db.query("UPDATE users SET role = 'user' WHERE role = 'admin' AND id NOT IN ($1, $2)", [a.id, b.id]);
    try {
      const results = await Promise.allSettled([setUserRole(t.db, a.email, 'user'), setUserRole(t.db, b.email, 'user')]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(String((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason.message)).toMatch(/only enabled admin/);
      expect((await t.db.query("SELECT count(*)::int AS n FROM users WHERE role = 'admin' AND disabled_at IS NULL")).rows[0].n).toBe(1);
    } finally {
      await t.db.query("UPDATE users SET role = 'admin' WHERE lower(email) = $1", [ADMIN.email]);
    }
  });
});
