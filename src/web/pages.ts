import { html } from './html.js';
import { layout } from './layout.js';

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
