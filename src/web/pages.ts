import { html, type Html } from './html.js';

export interface DeviceRow { id: number; name: string; module: string; status: string; last_seen_at: Date | string | null }

function layout(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Telemetry</title>
<link rel="stylesheet" href="/static/app.css">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`.text;
}

export function loginPage(csrfToken: string, email = '', message = ''): string {
  return layout('Log in', html`<h1>Log in</h1>
${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="/login">
<input type="hidden" name="_csrf" value="${csrfToken}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${email}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>`);
}

function lastSeen(v: Date | string | null): string {
  if (v === null) return 'never';
  const d = v instanceof Date ? v : new Date(v);
  return d.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
}

export function devicesPage(email: string, role: string, csrfToken: string, devices: readonly DeviceRow[]): string {
  const rows = devices.map((d) => html`<tr>
<td>${d.name}</td><td>${d.module}</td><td class="status-${d.status === 'online' ? 'online' : 'offline'}">${d.status}</td><td>${lastSeen(d.last_seen_at)}</td>
</tr>
`);
  return layout('Devices', html`<header>
<p>Logged in as <strong id="user-email">${email}</strong>${role === 'admin' ? ' (admin: all devices)' : ''}</p>
<form method="post" action="/logout">
<input type="hidden" name="_csrf" value="${csrfToken}">
<button type="submit">Log out</button>
</form>
</header>
<h1>Devices</h1>
${devices.length === 0 ? html`<p>No devices yet.</p>` : html`<table id="devices">
<thead><tr><th>Name</th><th>Module</th><th>Status</th><th>Last seen</th></tr></thead>
<tbody>
${rows}</tbody>
</table>`}`);
}

/** The 403 of a failed CSRF or Origin check: nothing changed; a reload gets a fresh form. */
export function formExpiredPage(reloadPath: string): string {
  return layout('Form expired', html`<h1>This form has expired</h1>
<p>For your security the form could not be accepted. Reload the page and try again.</p>
<p><a href="${reloadPath}">Reload the page</a></p>`);
}

export function messagePage(title: string, text: string): string {
  return layout(title, html`<h1>${title}</h1>
<p>${text}</p>
<p><a href="/devices">Devices</a></p>`);
}

export const APP_CSS = `body{font-family:system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:60rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.5rem}
form{margin:0}
label{display:block;margin-top:.75rem}
input[type=email],input[type=password]{display:block;width:100%;max-width:22rem;padding:.4rem;box-sizing:border-box}
button{display:block;margin-top:1rem;padding:.4rem 1rem}
header{display:flex;justify-content:space-between;align-items:center}
header button{margin-top:0}
.error{color:#a40000;font-weight:600}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #dde}
.status-online{color:#0a6b2b}
.status-offline{color:#7a7a7a}
`;

export const FAVICON_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6" fill="#0a6b2b"/></svg>';
