// Headless Chromium for the browser tests: Debian's /usr/bin/chromium (installed by .ci/run) through
// playwright-core, and a page that records every console error or warning, page error and CSP violation.
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = fs.existsSync(CHROMIUM);
/** Where screenshots go (ignored by git). */
export const SHOTS = 'test-output';
const ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export function launchChromium(): Promise<Browser> {
  fs.mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
}

/** Collects console errors and warnings and page errors of one page. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()} (${m.location().url})`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return problems;
}

/** A new page in the context whose problems (CSP violations named plainly) are collected. */
export async function watchedPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  // Violations are also reported as console errors by Chromium; this names them plainly.
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
  });
  const page = await context.newPage();
  return { page, problems: watchProblems(page) };
}
