import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';
import { get, logIn, postForm, setCookieLine } from './support/web-client.js';

const ADMIN = ['admin@test.local', 'test-admin-password'] as const;
const HSTS = 'max-age=31536000; includeSubDomains';

describe('HTTPS through uWS SSLApp, HSTS and the cookie attributes with and without TLS', () => {
  let dir: string;
  let tls: TestService;
  let plain: TestService;
  let proxied: TestService;
  let httpsUrl: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'telemetry-tls-'));
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', keyFile, '-out', certFile], { stdio: 'pipe' });
    [tls, plain, proxied] = await Promise.all([
      startTestService({ tlsKeyFile: keyFile, tlsCertFile: certFile }),
      startTestService(),
      startTestService({ cookieSecure: true }),
    ]);
    httpsUrl = `https://127.0.0.1:${tls.service.port}`;
  });
  afterAll(async () => {
    await Promise.all([tls?.close(), plain?.close(), proxied?.close()]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS with Strict-Transport-Security on pages, the API and errors, and does not speak plain HTTP', async () => {
    for (const p of ['/login', '/healthz', '/no-such-page']) {
      const r = await get(httpsUrl + p);
      expect(r.headers['strict-transport-security']).toBe(HSTS);
      expect(r.headers['x-frame-options']).toBe('DENY');
    }
    await expect(get(`http://127.0.0.1:${tls.service.port}/healthz`)).rejects.toThrow();
  });

  it('under TLS sets __Host-sid and __Host-login_csrf with Secure, HttpOnly, SameSite=Strict and Path=/', async () => {
    const form = await get(`${httpsUrl}/login`);
    expect(setCookieLine(form, '__Host-login_csrf')).toMatch(/^__Host-login_csrf=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Secure; Max-Age=3600$/);
    const s = await logIn(httpsUrl, ...ADMIN, { secure: true });
    expect(setCookieLine(s.response, '__Host-sid')).toBe(`__Host-sid=${s.sid}; HttpOnly; SameSite=Strict; Path=/; Secure`);
    expect(setCookieLine(s.response, 'sid')).toBeUndefined();
    expect(s.response.headers['strict-transport-security']).toBe(HSTS);
    // A plain `sid` cookie is not a session under TLS.
    expect((await get(`${httpsUrl}/devices`, { cookie: `sid=${s.sid}` })).status).toBe(303);
  });

  it('on plain HTTP sends no HSTS and sets sid without Secure', async () => {
    const form = await get(`${plain.baseUrl}/login`);
    expect(form.headers['strict-transport-security']).toBeUndefined();
    expect(setCookieLine(form, 'login_csrf')).toMatch(/^login_csrf=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=3600$/);
    const s = await logIn(plain.baseUrl, ...ADMIN);
    expect(setCookieLine(s.response, 'sid')).toBe(`sid=${s.sid}; HttpOnly; SameSite=Strict; Path=/`);
    expect(s.response.setCookies.join('\n')).not.toMatch(/Secure|__Host-/);
    expect(s.response.headers['strict-transport-security']).toBeUndefined();
  });

  it('with COOKIE_SECURE=1 on plain HTTP sets __Host-sid with Secure, still without HSTS', async () => {
    const s = await logIn(proxied.baseUrl, ...ADMIN, { secure: true });
    expect(setCookieLine(s.response, '__Host-sid')).toBe(`__Host-sid=${s.sid}; HttpOnly; SameSite=Strict; Path=/; Secure`);
    expect(s.response.headers['strict-transport-security']).toBeUndefined();
        expect((await get(`${proxied.baseUrl}/devices`, { cookie: s.cookie })).status).toBe(200);
    // Behind a TLS proxy the browser's Origin is https: both schemes of the same host are accepted.
    const out = await postForm(`${proxied.baseUrl}/logout`, { _csrf: s.csrf }, { cookie: s.cookie, origin: `https://127.0.0.1:${proxied.service.port}` });
    expect(out.status).toBe(303);
    expect(setCookieLine(out, '__Host-sid')).toBe('__Host-sid=; HttpOnly; SameSite=Strict; Path=/; Secure; Max-Age=0');
  });
});
