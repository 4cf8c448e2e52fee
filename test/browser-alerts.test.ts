// The alerts dashboard in a real headless Chromium (Debian's): an alert appears live without a reload and is
// acknowledged with its button, a form carrying a stale CSRF token is refused, and the nav's logout ends the
// session. Any console error, page error or CSP violation fails the test.
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { CHROMIUM, hasChromium, launchChromium, SHOTS, watchedPage } from './support/browser.js';
import { startTestService, type TestService } from './support/service.js';
import { get, logIn, postForm } from './support/web-client.js';

const PASSWORD = 'correct horse battery';

describe.skipIf(!hasChromium)(`alerts dashboard in headless Chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed)`}`, () => {
  let t: TestService;
  let browser: Browser;
  let service: string;
  let user: { id: number; email: string };
  let device: { id: number; token: string };

  beforeAll(async () => {
    t = await startTestService();
    service = `http://localhost:${t.service.port}`;
    user = await createUser(t.db, 'nurse@example.com', PASSWORD, 'user');
    device = await createDevice(t.db, user.id, 'ward-3 <bed 12>', 'health');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A fresh browser context logged in (the nurse unless told), with the CSP and error watchers on. */
  async function loggedInPage(as = { email: user.email, password: PASSWORD }, viewport = { width: 1100, height: 700 }): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport });
    const { page, problems } = await watchedPage(context);
    await page.goto(`${service}/login`);
    await page.fill('#email', as.email);
    await page.fill('#password', as.password);
    await Promise.all([page.waitForURL(`${service}/devices`), page.click('main button[type=submit]')]);
    return { context, page, problems };
  }
  const alertRow = async (id: number) =>
    (await t.db.query('SELECT status, acknowledged_by, resolved_at FROM alerts WHERE id = $1', [id])).rows[0];
  const openAlertId = async () =>
    Number((await t.db.query("SELECT id FROM alerts WHERE device_id = $1 AND status = 'open'", [device.id])).rows[0]?.id ?? 0);

  it('shows an alert opened by a reading live, without a reload, and acknowledges it with its button', async () => {
    const { context, page, problems } = await loggedInPage();
    await page.goto(`${service}/alerts`);
    await page.waitForSelector('html[data-live=open]');
    expect(await page.locator('#no-alerts').isVisible()).toBe(true);
    // A reload would drop this marker.
    await page.evaluate(() => { (window as any).notReloaded = true; });

    expect((await t.post('/api/telemetry-ingest', { data: { fall_detected: 1 } }, device.token)).status).toBe(200);
    const id = await openAlertId();
    expect(id).toBeGreaterThan(0);
    const row = page.locator(`#alerts tbody tr[data-alert-id="${id}"]`);
    await row.waitFor({ timeout: 5000 });
    expect(await page.evaluate(() => (window as any).notReloaded)).toBe(true);
    expect(await page.locator('#no-alerts').isVisible()).toBe(false);
    expect(await row.locator('td').first().innerText()).toBe('ward-3 <bed 12>');
    expect(await row.locator('.alert-status').innerText()).toBe('open');
    expect(await row.locator('.badge').innerText()).toBe('critical');
    await page.screenshot({ path: `${SHOTS}/alerts.png`, fullPage: true });

    await Promise.all([page.waitForURL(`${service}/alerts?status=unresolved`), row.locator('button', { hasText: 'Acknowledge' }).click()]);
    const after = page.locator(`#alerts tbody tr[data-alert-id="${id}"]`);
    expect(await after.locator('.alert-status').innerText()).toBe('acknowledged');
    expect(await after.innerText()).toContain(`by ${user.email}`);
    expect(await after.locator('button', { hasText: 'Acknowledge' }).count()).toBe(0);
    expect(await alertRow(id)).toEqual({ status: 'acknowledged', acknowledged_by: user.id, resolved_at: null });

    // Resolved by the engine while the page is open: the row turns resolved live.
    await page.waitForSelector('html[data-live=open]');
    expect((await t.post('/api/telemetry-ingest', { data: { fall_detected: 0 } }, device.token)).status).toBe(200);
    await page.locator(`#alerts tbody tr[data-alert-id="${id}"][data-status=resolved]`).waitFor({ timeout: 5000 });
    expect(await after.locator('.alert-status').innerText()).toBe('resolved');
    expect((await alertRow(id)).status).toBe('resolved');
    await page.screenshot({ path: `${SHOTS}/alerts-resolved-live.png`, fullPage: true });
    // On a phone the table becomes one card per alert: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(`${service}/alerts?status=all`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: `${SHOTS}/alerts-phone.png`, fullPage: true });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('refuses a form posted with a stale CSRF token with the reload page, and changes neither the alert nor the rules', async () => {
    // A token of a session that has since ended.
    const old = await logIn(t.baseUrl, user.email, PASSWORD);
    expect((await postForm(`${t.baseUrl}/logout`, { _csrf: old.csrf }, { cookie: old.cookie })).status).toBe(303);
    expect((await t.post('/api/telemetry-ingest', { data: { fall_detected: 1 } }, device.token)).status).toBe(200);
    const id = await openAlertId();

    const { context, page, problems } = await loggedInPage();
    await page.goto(`${service}/alerts`);
    const form = page.locator(`#alerts tr[data-alert-id="${id}"] form[action="/alerts/${id}/resolve"]`);
    await form.locator('input[name=_csrf]').evaluate((input, token) => { (input as HTMLInputElement).value = token; }, old.csrf);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${service}/alerts/${id}/resolve` && r.request().method() === 'POST'),
      form.locator('button').click(),
    ]);
    expect(answer.status()).toBe(403);
    await page.waitForLoadState();
    expect(await page.locator('h1').innerText()).toBe('This form has expired');
    expect(await page.locator('main').innerText()).toContain('Reload the page');
    expect(await alertRow(id)).toEqual({ status: 'open', acknowledged_by: null, resolved_at: null });
    expect((await t.db.query("SELECT count(*)::int AS n FROM module_events WHERE device_id = $1 AND detail->>'manual' = 'true'", [device.id])).rows[0].n).toBe(0);

    const rulesBefore = (await t.db.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n;
    await page.goto(`${service}/rules/new`);
    await page.fill('#metric_name', 'stale_metric');
    await page.fill('#threshold', '5');
    await page.locator('main form input[name=_csrf]').evaluate((input, token) => { (input as HTMLInputElement).value = token; }, old.csrf);
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${service}/rules` && r.request().method() === 'POST'),
      page.click('main button[type=submit]'),
    ]);
    expect(refused.status()).toBe(403);
    await page.waitForLoadState();
    expect(await page.locator('main').innerText()).toContain('Reload the page');
    expect((await t.db.query('SELECT count(*)::int AS n FROM alert_rules')).rows[0].n).toBe(rulesBefore);
    await page.goto(`${service}/rules`);
    expect(await page.locator('#rules tbody tr').count()).toBe(rulesBefore);
    await page.screenshot({ path: `${SHOTS}/rules.png`, fullPage: true });
    // Still logged in: the refusal ended nothing.
    await page.goto(`${service}/alerts`);
    expect(page.url()).toBe(`${service}/alerts`);
    // Chromium reports each refused POST itself; those two are expected, nothing else is.
    const refusedPosts = [`${service}/alerts/${id}/resolve`, `${service}/rules`].map((url) =>
      `console error: Failed to load resource: the server responded with a status of 403 (Forbidden) (${url})`);
    expect(problems.filter((p) => !refusedPosts.includes(p))).toEqual([]);
    await context.close();
  });

  it('fits the admin pages on a phone screen (390 px) with no sideways scrolling, and shows a refused rule form\'s reason', async () => {
    const { context, page, problems } = await loggedInPage({ email: 'admin@test.local', password: 'test-admin-password' }, { width: 390, height: 800 });
    for (const path of ['/alerts?status=all', '/rules', '/rules/new', '/users']) {
      const r = await page.goto(`${service}${path}`);
      expect([path, r?.status()]).toEqual([path, 200]);
      expect([path, await page.evaluate(() => document.documentElement.scrollWidth)]).toEqual([path, 390]);
      await page.screenshot({ path: `${SHOTS}/phone-${path.split('?')[0].slice(1).replace(/\//g, '-')}.png`, fullPage: true });
    }
    await page.goto(`${service}/rules/new`);
    await page.fill('#metric_name', 'heart_rate');
    await page.fill('#threshold', 'lots');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${service}/rules` && r.request().method() === 'POST'),
      page.click('main button[type=submit]'),
    ]);
    expect(answer.status()).toBe(400);
    await page.waitForLoadState();
    expect(await page.locator('p.error').innerText()).toBe('Threshold must be a finite number; got "lots".');
    expect(await page.inputValue('#threshold')).toBe('lots');
    await page.screenshot({ path: `${SHOTS}/phone-rule-refused.png`, fullPage: true });
    expect(problems.filter((p) => p !== `console error: Failed to load resource: the server responded with a status of 400 (Bad Request) (${service}/rules)`)).toEqual([]);
    await context.close();
  });

  it('ends the session with the nav\'s Log out button: back at /login, /alerts redirects there, and the old cookie is dead', async () => {
    const { context, page, problems } = await loggedInPage();
    await page.goto(`${service}/alerts`);
    const sid = (await context.cookies(service)).find((c) => c.name === 'sid')!.value;
    expect((await get(`${t.baseUrl}/alerts`, { cookie: `sid=${sid}` })).status).toBe(200);
    await Promise.all([page.waitForURL(`${service}/login`), page.locator('nav.top button', { hasText: 'Log out' }).click()]);
    await page.goto(`${service}/alerts`);
    expect(page.url()).toBe(`${service}/login`);
    const replay = await get(`${t.baseUrl}/alerts`, { cookie: `sid=${sid}` });
    expect([replay.status, replay.headers.location]).toEqual([303, '/login']);
    expect(problems).toEqual([]);
    await context.close();
  });
});
