// The dashboard and device pages in a real headless Chromium (Debian's, which .ci/run installs): the one-time
// token, live updates over /api/live without reloads, uPlot charts, isolation between users, screenshots.
// Every test fails on any console error or warning, page error or CSP violation.
import fs from 'node:fs';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevice } from '../dist/src/auth/device-registry.js';
import { createUser } from '../dist/src/auth/users.js';
import { CHROMIUM, hasChromium, launchChromium, SHOTS, watchedPage } from './support/browser.js';
import { startTestService, type TestService } from './support/service.js';

const PASSWORD = 'correct horse battery';
const MIN = 60_000;

interface Session { context: BrowserContext; page: Page; problems: string[] }

describe.skipIf(!hasChromium)(`dashboard in headless Chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed; .ci/run installs Debian's chromium)`}`, () => {
  let t: TestService;
  let browser: Browser;
  let service: string;
  let carol: { id: number };
  let dave: { id: number };
  const ingest = (token: string, body: unknown) => t.post('/api/telemetry-ingest', body, token);

  /** A fresh browser context logged in through the form, collecting every problem its pages report. */
  async function logIn(email: string, viewport = { width: 1280, height: 800 }): Promise<Session> {
    const context = await browser.newContext({ viewport });
    const { page, problems } = await watchedPage(context);
    await page.goto(`${service}/login`);
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${service}/devices`), page.click('button[type=submit]')]);
    return { context, page, problems };
  }
  const waitLive = (page: Page) => page.waitForSelector('html[data-live=open]', { state: 'attached', timeout: 10_000 });
  const text = (page: Page, selector: string) => page.locator(selector).innerText();

  beforeAll(async () => {
    t = await startTestService();
    // localhost, as a person would type it (the curl example and the Origin check use the Host header).
    service = `http://localhost:${t.service.port}`;
    carol = await createUser(t.db, 'carol@example.com', PASSWORD, 'user');
    dave = await createUser(t.db, 'dave@example.com', PASSWORD, 'user');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('adds a device and shows its token exactly once: copied from the page, gone after a reload', async () => {
    const s = await logIn('carol@example.com');
    await s.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service });
    await s.page.click('nav.top >> text=Add device');
    await s.page.fill('#name', 'ward-9 <monitor>');
    await s.page.selectOption('#module', 'health');
    await Promise.all([s.page.waitForSelector('#device-token'), s.page.click('#new-device button[type=submit]')]);
    const token = await text(s.page, '#device-token');
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(await text(s.page, '#curl-example')).toBe(
      `curl -X POST ${service}/api/telemetry-ingest -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json' -d '{"data":{"heart_rate":72,"spo2":98}}'`);
    await s.page.click('button[data-copy=device-token]');
    await s.page.waitForFunction(() => document.querySelector('button[data-copy=device-token]')!.textContent === 'Copied');
    expect(await s.page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    expect((await ingest(token, { data: { heart_rate: 72 } })).status).toBe(200);
    await s.page.screenshot({ path: `${SHOTS}/device-token.png`, fullPage: true });

    // A reload re-sends the form: it lands on the dashboard, creates no second device and shows no token.
    await s.page.reload();
    expect(s.page.url()).toBe(`${service}/devices`);
    expect(await s.page.content()).not.toContain(token);
    expect(await s.page.locator('#device-token').count()).toBe(0);
    expect(await text(s.page, '#devices tbody')).toContain('ward-9 <monitor>');
    const created = await t.db.query('SELECT id FROM devices WHERE name = $1', ['ward-9 <monitor>']);
    expect(created.rows).toHaveLength(1);
    await s.page.goto(`${service}/devices/${created.rows[0].id}`);
    expect(await s.page.content()).not.toContain(token);
    expect(s.problems).toEqual([]);
    await s.context.close();
  });

  it('updates a value, the status and the open-alert count on the dashboard without a reload when readings arrive or the device goes offline', async () => {
    const d = await createDevice(t.db, carol.id, 'live-pendant', 'health');
    const s = await logIn('carol@example.com');
    await waitLive(s.page);
    const row = `#devices tr[data-device-id="${d.id}"]`;
    expect(await text(s.page, `${row} [data-field=status]`)).toBe('offline');
    expect(await text(s.page, `${row} [data-metric=heart_rate]`)).toBe('—');
    const totalBefore = Number(await text(s.page, '#open-alerts-total'));
    // A marker on the window survives only if the page is never reloaded.
    await s.page.evaluate(() => { (window as unknown as { marker: number }).marker = 42; });

    expect((await ingest(d.token, { data: { heart_rate: 99, spo2: 95 } })).status).toBe(200);
    await s.page.waitForFunction((sel) => document.querySelector(sel)?.textContent === '99 bpm', `${row} [data-metric=heart_rate]`);
    expect(await text(s.page, `${row} [data-metric=spo2]`)).toBe('95 %');
    expect(await text(s.page, `${row} [data-field=status]`)).toBe('online');
    expect(await text(s.page, `${row} [data-field=last-seen]`)).toMatch(/^\d+ s ago$/);
    // A late reading (an hour old) is stored, but the dashboard keeps the newer value; the next current one shows.
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect((await ingest(d.token, { metric_name: 'heart_rate', metric_value: 41, recorded_at: hourAgo })).status).toBe(200);
    expect((await ingest(d.token, { data: { spo2: 96 } })).status).toBe(200);
    await s.page.waitForFunction((sel) => document.querySelector(sel)?.textContent === '96 %', `${row} [data-metric=spo2]`);
    expect(await text(s.page, `${row} [data-metric=heart_rate]`)).toBe('99 bpm');

    expect((await ingest(d.token, { data: { fall_detected: 1 } })).status).toBe(200);
    await s.page.waitForFunction((sel) => document.querySelector(sel)?.textContent === '1', `${row} [data-field=open-alerts]`);
    expect(Number(await text(s.page, '#open-alerts-total'))).toBe(totalBefore + 1);
    expect((await ingest(d.token, { data: { fall_detected: 0 } })).status).toBe(200);
    await s.page.waitForFunction((sel) => document.querySelector(sel)?.textContent === '0', `${row} [data-field=open-alerts]`);
    expect(Number(await text(s.page, '#open-alerts-total'))).toBe(totalBefore);
    // Silent for longer than its timeout: the sweeper marks it offline and the badge follows.
    await t.db.query("UPDATE devices SET last_seen_at = now() - interval '1 day' WHERE id = $1", [d.id]);
    expect(await t.service.sweepOnce!()).toBeGreaterThanOrEqual(1);
    await s.page.waitForFunction((sel) => document.querySelector(sel)?.textContent === 'offline', `${row} [data-field=status]`);
    expect(await s.page.getAttribute(`${row} [data-field=status]`, 'class')).toBe('badge offline');
    expect(await s.page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(42);
    expect(s.problems).toEqual([]);
    await s.context.close();
  });

  it('draws the posted points in a uPlot chart and appends live readings to it and to the alert list', async () => {
    const d = await createDevice(t.db, carol.id, 'chart-van', 'vehicle');
    const base = Math.floor(Date.now() / 300_000) * 300_000 - 60 * MIN;
    for (const [i, speed] of [35, 80, 52].entries()) {
      const at = new Date(base + (i + 1) * 10 * MIN).toISOString();
      expect((await ingest(d.token, { data: { speed_kmh: speed }, gps: { lat: 48.137 + i * 0.004, lng: 11.575 + i * 0.006 }, recorded_at: at })).status).toBe(200);
    }
    const s = await logIn('carol@example.com');
    await s.page.goto(`${service}/devices/${d.id}`);
    await waitLive(s.page);
    const figure = 'figure.chart[data-metric=speed_kmh]';
    await s.page.waitForSelector(`${figure}[data-points="3"]`);
    const painted = () => s.page.$eval(`${figure} canvas`, (c) => {
      const canvas = c as HTMLCanvasElement;
      const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) n++;
      return n;
    });
    expect(await painted()).toBeGreaterThan(200);
    expect(await s.page.locator('svg#gps-track polyline.gps-line').getAttribute('points')).toMatch(/^[\d.]+,[\d.]+ [\d.]+,[\d.]+ [\d.]+,[\d.]+$/);

    expect((await ingest(d.token, { data: { speed_kmh: 61, fuel_pct: 40 } })).status).toBe(200);
    await s.page.waitForSelector(`${figure}[data-points="4"]`);
    expect(await text(s.page, '#latest tr[data-metric=speed_kmh] .metric-value')).toBe('61 km/h');
    expect(await text(s.page, '#latest tr[data-metric=fuel_pct] .metric-value')).toBe('40');
    expect((await ingest(d.token, { data: { impact_detected: 1 } })).status).toBe(200);
    await s.page.waitForSelector('#alerts tbody tr');
    expect(await text(s.page, '#alerts tbody tr')).toMatch(/impact_detected\s+1\s+critical\s+open/);
    expect(await text(s.page, '.summary [data-field=open-alerts]')).toBe('1');
    expect(s.problems).toEqual([]);
    await s.context.close();
  });

  it("does not show a user another user's devices, in the list or by direct URL", async () => {
    const hers = await createDevice(t.db, carol.id, 'carols-private-sensor', 'factory');
    const s = await logIn('dave@example.com');
    const mine = await createDevice(t.db, dave.id, 'daves-sensor', 'factory');
    await s.page.reload();
    expect(await text(s.page, '#devices tbody')).toContain('daves-sensor');
    expect(await s.page.content()).not.toContain('carols-private-sensor');
    expect(await s.page.locator(`tr[data-device-id="${hers.id}"]`).count()).toBe(0);
    for (const path of [`/devices/${hers.id}`, `/devices/${hers.id}/delete`, `/devices/${hers.id}/rotate-token`]) {
      const r = await s.page.goto(`${service}${path}`);
      expect(r?.status()).toBe(404);
      expect(await text(s.page, 'h1')).toBe('Device not found');
      expect(await s.page.content()).not.toContain('carols-private-sensor');
    }
    expect((await s.page.goto(`${service}/devices/${mine.id}`))?.status()).toBe(200);
    // Chromium logs every 404 document as a console error: exactly those three, nothing else.
    expect(s.problems).toEqual(['', '/delete', '/rotate-token'].map((p) =>
      `console error: Failed to load resource: the server responded with a status of 404 (Not Found) (${service}/devices/${hers.id}${p})`));
    await s.context.close();
  });

  it('saves screenshots of the dashboard on a desktop and a phone, and of a device detail page', async () => {
    const truck = await createDevice(t.db, dave.id, 'fleet-truck-12', 'fleet');
    const start = Date.now() - 3 * 60 * MIN;
    for (let i = 0; i < 36; i++) {
      const body = {
        data: { speed_kmh: 50 + 30 * Math.sin(i / 4), cargo_temp_c: 4 + Math.cos(i / 5), fuel_pct: 90 - i },
        gps: { lat: 53.55 + 0.01 * Math.sin(i / 6), lng: 9.99 + 0.002 * i },
        recorded_at: new Date(start + i * 5 * MIN).toISOString(),
      };
      expect((await ingest(truck.token, body)).status).toBe(200);
    }
    const desk = await logIn('dave@example.com');
    await desk.page.screenshot({ path: `${SHOTS}/dashboard.png`, fullPage: true });
    await desk.page.goto(`${service}/devices/${truck.id}`);
    await desk.page.waitForSelector('figure.chart[data-metric=speed_kmh][data-points="36"]');
    await desk.page.screenshot({ path: `${SHOTS}/device-detail.png`, fullPage: true });
    const phone = await logIn('dave@example.com', { width: 390, height: 844 });
    // On a phone the table stacks: one block per device, no sideways scrolling.
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await phone.page.screenshot({ path: `${SHOTS}/dashboard-phone.png`, fullPage: true });
    for (const f of ['dashboard.png', 'device-detail.png', 'dashboard-phone.png']) expect(fs.statSync(`${SHOTS}/${f}`).size).toBeGreaterThan(5000);
    expect([...desk.problems, ...phone.problems]).toEqual([]);
    await desk.context.close();
    await phone.context.close();
  });
});
