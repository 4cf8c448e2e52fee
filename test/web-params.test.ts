// Malformed URL parameters on every route that takes one: a clear 404 (or the login redirect), never a crash.
// A percent-escape such as %ZZ once threw outside any handler and stopped the whole process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../dist/src/auth/users.js';
import { startTestService, type TestService } from './support/service.js';
import { get, logIn, postForm } from './support/web-client.js';

const PASSWORD = 'correct horse battery';
const BAD = ['%ZZ', '%', '%E0%A4%A', '..%2F..%2Fetc', '1%00'];
const PAGES = ['/devices/:id', '/devices/:id/rotate-token', '/devices/:id/delete', '/alerts/:id/row', '/rules/:id/edit', '/rules/:id/delete'];
const ACTIONS = ['/devices/:id/rotate-token', '/devices/:id/delete', '/alerts/:id/acknowledge', '/alerts/:id/resolve', '/rules/:id', '/rules/:id/delete',
  '/users/:id/disable', '/users/:id/enable', '/users/:id/role'];

describe('malformed route parameters', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService(); });
  afterAll(async () => { await t?.close(); });

  it('answers every page and action with a 4xx or the login redirect, and the service keeps running', async () => {
    const admin = await createUser(t.db, 'params-admin@example.com', PASSWORD, 'admin');
    const s = await logIn(t.baseUrl, admin.email, PASSWORD);
    for (const bad of BAD) {
      for (const route of PAGES) {
        const path = route.replace(':id', bad);
        expect((await get(`${t.baseUrl}${path}`)).status, `anonymous GET ${path}`).toBe(303);
        const r = await get(`${t.baseUrl}${path}`, { cookie: s.cookie });
        expect(r.status, `GET ${path}`).toBe(404);
      }
      for (const route of ACTIONS) {
        const path = route.replace(':id', bad);
        const r = await postForm(`${t.baseUrl}${path}`, { _csrf: s.csrf, role: 'user' }, { cookie: s.cookie });
        expect(r.status, `POST ${path}`).toBe(404);
      }
      const mobile = await t.get(`/api/mobile/devices/${bad}`, 'x'.repeat(64));
      expect(mobile.status).toBe(401);
    }
    expect((await t.get('/healthz')).status).toBe(200);
  });
});
