import type { LiveSession } from '../auth/sessions.js';
import { assetUrl } from './assets.js';
import { html, type Html } from './html.js';

export interface LayoutOptions {
  /** The logged-in user's session: shows the navigation with the logout button. */
  session?: LiveSession;
  /** The nav entry to mark as the current page ('/devices', '/alerts', ...). */
  active?: string;
  /** Asset names of page scripts (served by web/assets.ts); `live.js` first when the page updates live. */
  scripts?: readonly string[];
  /** Asset names of extra stylesheets (uPlot's). */
  styles?: readonly string[];
}

const NAV: ReadonlyArray<{ href: string; label: string; adminOnly?: boolean }> = [
  { href: '/devices', label: 'Dashboard' },
  { href: '/devices/new', label: 'Add device' },
  { href: '/alerts', label: 'Alerts' },
  { href: '/rules', label: 'Alert rules' },
  { href: '/users', label: 'Users', adminOnly: true },
  { href: '/settings', label: 'Settings' },
];

function nav(session: LiveSession, active: string | undefined): Html {
  const { user } = session;
  const links = NAV.filter((n) => !n.adminOnly || user.role === 'admin')
    .map((n) => html`<a href="${n.href}"${n.href === active ? html` aria-current="page"` : ''}>${n.label}</a>`);
  return html`<nav class="top">
${links}
<span class="who">Logged in as <strong id="user-email">${user.email}</strong>${user.role === 'admin' ? ' (admin)' : ''}</span>
<form method="post" action="/logout">
<input type="hidden" name="_csrf" value="${session.csrfToken}">
<button type="submit">Log out</button>
</form>
</nav>`;
}

/** The HTML document around every page: no inline script or style, so it works under the CSP of SPEC §4. */
export function layout(title: string, body: Html, opts: LayoutOptions = {}): string {
  const styles = ['app.css', ...(opts.styles ?? [])].map((s) => html`<link rel="stylesheet" href="${assetUrl(s)}">\n`);
  const scripts = (opts.scripts ?? []).map((s) => html`<script src="${assetUrl(s)}" defer></script>\n`);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Telemetry</title>
${styles}<link rel="icon" href="${assetUrl('favicon.svg')}" type="image/svg+xml">
${scripts}</head>
<body>
${opts.session ? nav(opts.session, opts.active) : ''}
<main>
${body}
</main>
</body>
</html>
`.text;
}
