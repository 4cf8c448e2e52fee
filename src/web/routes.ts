import type { LoginThrottle } from '../auth/login-throttle.js';
import type { Sessions } from '../auth/sessions.js';
import type { TemplatedApp } from '../http/uws.js';
import type { LiveHub } from '../live/hub.js';
import type { Logger } from '../observability/logger.js';
import type { Pool } from '../store/db.js';
import { registerAlertRoutes } from './alert-routes.js';
import { registerAssets } from './assets.js';
import { registerAuthRoutes } from './auth-routes.js';
import { registerDeviceRoutes } from './device-routes.js';
import { createWebRouter } from './router.js';
import { registerRuleRoutes } from './rule-routes.js';
import { registerSettingsRoutes } from './settings-routes.js';
import { registerUserRoutes } from './user-routes.js';

export interface WebDeps {
  pool: Pool;
  sessions: Sessions;
  /** The same throttle as the mobile login: failures through either count together. */
  throttle: LoginThrottle;
  log: Logger;
  tls: boolean;
  /** COOKIE_SECURE=1: Secure __Host- cookies on plain HTTP, for a service behind a TLS proxy. */
  cookieSecure: boolean;
  /** TRUST_PROXY=1: the client address comes from X-Forwarded-For (see http/client-ip.ts). */
  trustProxy: boolean;
  /** The service's clock (injectable in tests): relative times, chart ranges, acknowledged and resolved times. */
  now?: () => number;
  /** Pushes alerts resolved by hand to the open pages and apps. */
  live?: LiveHub;
}

/** The browser side of SPEC §4.3: one router, and a module per group of pages. */
export function registerWebRoutes(app: TemplatedApp, deps: WebDeps): void {
  const router = createWebRouter(app, deps);
  registerAuthRoutes(router, deps);
  registerAssets(router);
  registerDeviceRoutes(router, deps);
  registerAlertRoutes(router, { pool: deps.pool, now: deps.now ?? Date.now, live: deps.live });
  registerRuleRoutes(router, deps);
  registerUserRoutes(router, deps);
  registerSettingsRoutes(router, deps);

  router.open('get', '/', async () => ({ status: 303, location: '/devices' }));
}
