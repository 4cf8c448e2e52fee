// Templates of the admin's users page: the list with role and disable/enable buttons, and the create form.
import { ROLES, type UserListing } from '../auth/users.js';
import type { LiveSession } from '../auth/sessions.js';
import { when } from './alert-pages.js';
import { html, type Html } from './html.js';
import { layout } from './layout.js';

export interface NewUserValues { email: string; role: string }

function csrf(session: LiveSession): Html {
  return html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
}

function userRow(session: LiveSession, u: UserListing): Html {
  const self = u.id === session.user.id;
  const other = u.role === 'admin' ? 'user' : 'admin';
  // Your own account has no buttons: an admin cannot disable or demote themselves (the routes refuse it too).
  const actions = self ? html`<span class="muted">you</span>` : html`<form class="inline" method="post" action="/users/${u.id}/role">
${csrf(session)}<input type="hidden" name="role" value="${other}">
<button type="submit">Make ${other}</button>
</form>
<form class="inline" method="post" action="/users/${u.id}/${u.disabled_at ? 'enable' : 'disable'}">
${csrf(session)}<button type="submit">${u.disabled_at ? 'Enable' : 'Disable'}</button>
</form>`;
  return html`<tr data-user-id="${u.id}"${u.disabled_at ? html` class="disabled"` : ''}>
<td data-label="Email">${u.email}</td>
<td data-label="Role">${u.role}</td>
<td data-label="Created">${when(u.created_at)}</td>
<td data-label="Disabled">${u.disabled_at ? when(u.disabled_at) : 'no'}</td>
<td data-label="Actions" class="actions">${actions}</td>
</tr>
`;
}

/** GET /users, and the same page with a 400 and the reason when the create form was refused. */
export function usersPage(session: LiveSession, users: readonly UserListing[], values: NewUserValues = { email: '', role: 'user' }, message = ''): string {
  return layout('Users', html`<h1>Users</h1>
<div class="table-wrap">
<table id="users" class="stack">
<thead><tr><th>Email</th><th>Role</th><th>Created</th><th>Disabled</th><th></th></tr></thead>
<tbody>
${users.map((u) => userRow(session, u))}</tbody>
</table>
</div>
<p>Disabling a user ends their browser sessions and app tokens at once; enabling lets them log in again.</p>
<h2 id="new-user">New user</h2>
${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="/users">
${csrf(session)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="off" required value="${values.email}">
<label for="password">Password (8 to 72 bytes)</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8">
<label for="role">Role</label>
<select id="role" name="role">${ROLES.map((r) => html`<option value="${r}"${r === values.role ? html` selected` : ''}>${r}</option>`)}</select>
<button type="submit">Create user</button>
</form>`, { session, active: '/users' });
}

export function userRefusedPage(session: LiveSession, text: string): string {
  return layout('Not possible', html`<h1>Not possible</h1>
<p>${text}</p>
<p><a href="/users">Back to the users</a></p>`, { session, active: '/users' });
}
