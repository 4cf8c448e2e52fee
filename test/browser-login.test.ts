// The browser flow in a real headless Chromium (Debian's, which .ci/run installs): log in through the form,
// see the device list, check cookie flags and headers from the browser's view, and a cross-site form post.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { CHROMIUM, hasChromium, launchChromium, SHOTS, watchedPage } from './support/browser.js';
import { startTestService, type TestService } from './support/service.js';

const PASSWORD = 'correct horse battery';
const CSP = "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

describe.skipIf(!hasChromium)(`browser login in headless Chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed; .ci/run installs Debian's chromium)`}`, () => {
  let t: TestService;
  let browser: Browser;
  let attacker: http.Server;
  let service: string;
  let attackerUrl: string;

  beforeAll(async () => {
    t = await startTestService();
    // localhost and 127.0.0.1 are different sites to the browser: the attacker page is cross-site.
    service = `http://localhost:${t.service.port}`;
    const user = await createUser(t.db, 'erin@example.com', PASSWORD, 'user');
    const device = await createDevice(t.db, user.id, 'ward-7 <monitor>', 'health');
    expect((await t.post('/api/telemetry-ingest', { data: { heart_rate: 64 } }, device.token)).status).toBe(200);
    await createDevice(t.db, (await createUser(t.db, 'frank@example.com', PASSWORD, 'user')).id, 'franks-truck', 'fleet');

    attacker = http.createServer((req, res) => {
      const target = req.url === '/login-attack' ? '/login' : '/logout';
      const fields = target === '/login'
        ? '<input name="email" value="mallory@example.com"><input name="password" value="mallory-password"><input name="_csrf" value="guess">'
        : '<input name="_csrf" value="guess">';
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>win a prize</title><form method="post" action="${service}${target}">${fields}</form><script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    if (attacker) await new Promise((resolve) => attacker.close(resolve));
    await t?.close();
  });

  it('logs in through the form, shows the own device list, keeps the cookie HttpOnly and Strict, and refuses cross-site posts', async () => {
    const context = await browser.newContext();
    const { page, problems } = await watchedPage(context);

    const login = await page.goto(`${service}/login`);
    expect(login?.status()).toBe(200);
    const loginHeaders = login!.headers();
    expect(loginHeaders['content-security-policy']).toBe(CSP);
    expect(loginHeaders['x-frame-options']).toBe('DENY');
    expect(loginHeaders['x-content-type-options']).toBe('nosniff');
    expect(loginHeaders['referrer-policy']).toBe('strict-origin-when-cross-origin');
    expect(loginHeaders['cache-control']).toBe('no-store');
    expect(loginHeaders['strict-transport-security']).toBeUndefined();
    // The stylesheet loaded under the CSP (it is what puts the form in a system-ui font).
    expect(await page.evaluate(() => getComputedStyle(document.body).fontFamily)).toContain('system-ui');
    await page.screenshot({ path: `${SHOTS}/browser-login.png`, fullPage: true });

    await page.fill('#email', 'erin@example.com');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${service}/devices`), page.click('button[type=submit]')]);
    expect(await page.locator('#devices tbody tr').count()).toBe(1);
    expect(await page.locator('#devices tbody').innerText()).toMatch(/ward-7 <monitor>\s+health\s+online\s+\d+ (s|min) ago\s+heart_rate 64/);
    expect(await page.content()).not.toContain('franks-truck');
    await page.screenshot({ path: `${SHOTS}/browser-devices.png`, fullPage: true });

    const cookies = await context.cookies(service);
    const sid = cookies.find((c) => c.name === 'sid');
    expect(sid).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/', secure: false, domain: 'localhost' });
    expect(sid!.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookies.find((c) => c.name === 'login_csrf')).toBeUndefined();
    expect(await page.evaluate(() => document.cookie)).toBe('');

    const devices = await page.goto(`${service}/devices`);
    expect(devices?.status()).toBe(200);
    expect(devices!.headers()['content-security-policy']).toBe(CSP);
    expect(devices!.headers()['cache-control']).toBe('no-store');
    expect(devices!.headers()['x-frame-options']).toBe('DENY');
    expect(problems).toEqual([]);

    // A cross-site page auto-submits forms to /logout and /login: both are refused, the session lives on.
    const evil = await context.newPage();
    for (const attack of ['/logout-attack', '/login-attack']) {
      const target = attack === '/login-attack' ? '/login' : '/logout';
      const [answer] = await Promise.all([
        evil.waitForResponse((r) => r.url() === `${service}${target}` && r.request().method() === 'POST'),
        evil.goto(`${attackerUrl}${attack}`),
      ]);
      expect(answer.status()).toBe(403);
      expect(answer.request().headers()['origin']).toBe(attackerUrl);
      expect(await evil.locator('h1').innerText()).toBe('This form has expired');
    }
    await evil.screenshot({ path: `${SHOTS}/browser-cross-site-refused.png`, fullPage: true });
    expect((await context.cookies(service)).find((c) => c.name === 'sid')?.value).toBe(sid!.value);
    const still = await page.goto(`${service}/devices`);
    expect(still?.status()).toBe(200);
    expect(page.url()).toBe(`${service}/devices`);

    // The page's own logout form works: the session ends on the server.
    await Promise.all([page.waitForURL(`${service}/login`), page.click('text=Log out')]);
    expect((await t.db.query('SELECT count(*)::int AS n FROM sessions')).rows[0].n).toBe(0);
    await page.goto(`${service}/devices`);
    expect(page.url()).toBe(`${service}/login`);
    expect(problems).toEqual([]);
    await context.close();
  });
});
