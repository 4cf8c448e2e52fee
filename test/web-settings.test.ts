// The settings page: a user sets, sees and removes their own webhook from the browser, under CSRF.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../dist/src/auth/users.js';
import { startTestService, type TestService } from './support/service.js';
import { formCsrf, get, logIn, postForm } from './support/web-client.js';

const PASSWORD = 'correct horse battery';

describe('settings page', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService(); });
  afterAll(async () => { await t?.close(); });

  const webhookRow = async (userId: number) => (await t.db.query('SELECT url, secret FROM user_webhooks WHERE user_id = $1', [userId])).rows[0];

  it('sets a webhook, shows its generated secret once, keeps the URL escaped, and removes it', async () => {
    const user = await createUser(t.db, 'settings@example.com', PASSWORD, 'user');
    const s = await logIn(t.baseUrl, user.email, PASSWORD);
    const page = await get(`${t.baseUrl}/settings`, { cookie: s.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('No webhook is set.');

    const url = 'https://example.com/hook?a=1&b="<x>"';
    const set = await postForm(`${t.baseUrl}/settings/webhook`, { _csrf: formCsrf(page.text), url, secret: '' }, { cookie: s.cookie });
    expect(set.status).toBe(200);
    const stored = await webhookRow(user.id);
    expect(stored.url).toBe(url);
    expect(set.text).toContain(stored.secret);
    expect(set.text).toContain('https://example.com/hook?a=1&amp;b=&quot;&lt;x&gt;&quot;');
    expect(set.text).not.toContain('"<x>"');
    const again = await get(`${t.baseUrl}/settings`, { cookie: s.cookie });
    expect(again.text).not.toContain(stored.secret);

    const bad = await postForm(`${t.baseUrl}/settings/webhook`, { _csrf: s.csrf, url: 'ftp://example.com/', secret: '' }, { cookie: s.cookie });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('url must use http or https');
    expect((await webhookRow(user.id)).url).toBe(url);

    const removed = await postForm(`${t.baseUrl}/settings/webhook/delete`, { _csrf: s.csrf }, { cookie: s.cookie });
    expect(removed.status).toBe(303);
    expect(await webhookRow(user.id)).toBeUndefined();
  });

  it('refuses a webhook change with a wrong CSRF token or from another origin, and changes nothing', async () => {
    const user = await createUser(t.db, 'settings2@example.com', PASSWORD, 'user');
    const s = await logIn(t.baseUrl, user.email, PASSWORD);
    const form = { url: 'https://evil.example.com/', secret: '' };
    expect((await postForm(`${t.baseUrl}/settings/webhook`, { ...form, _csrf: 'x'.repeat(43) }, { cookie: s.cookie })).status).toBe(403);
    expect((await postForm(`${t.baseUrl}/settings/webhook`, { ...form, _csrf: s.csrf }, { cookie: s.cookie, origin: 'http://evil.example.com' })).status).toBe(403);
    expect(await webhookRow(user.id)).toBeUndefined();
  });
});
