import { Errors } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';
import type { Responder } from './respond.js';
import type { HttpResponse, TemplatedApp } from './uws.js';

export interface OpsRouteDeps {
  respond: Responder;
  metrics: Metrics;
  /** Resolves to the names of what is not ready; empty when ready. */
  readiness: () => Promise<string[]>;
}

/** /healthz (the process lives), /readyz (database, migrations, workers) and /metrics (Prometheus). */
export function registerOpsRoutes(app: TemplatedApp, deps: OpsRouteDeps): void {
  const { respond } = deps;
  // Load balancers probe with GET or HEAD: both answer the same status (HEAD without a body).
  const healthz = (head: boolean) => (res: HttpResponse) => respond.send(res, 200, head ? '' : '{"status":"ok"}');
  const readyz = (head: boolean) => (res: HttpResponse) => {
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    void deps.readiness().then((missing) => {
      if (aborted) return;
      if (missing.length === 0) respond.send(res, 200, head ? '' : '{"status":"ready"}');
      else respond.send(res, 503, head ? '' : JSON.stringify({ status: 'not ready', failing: missing }), 'application/json', { 'Retry-After': '1' });
    });
  };
  app.get('/healthz', healthz(false));
  app.head('/healthz', healthz(true));
  app.get('/readyz', readyz(false));
  app.head('/readyz', readyz(true));

  app.get('/metrics', (res) => {
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    void deps.metrics.registry.metrics().then((text) => {
      if (!aborted) respond.send(res, 200, text, deps.metrics.registry.contentType);
    });
  });

  app.any('/*', (res) => respond.error(res, Errors.notFound));
}
