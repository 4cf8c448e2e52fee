import client from 'prom-client';

/** The service's Prometheus metrics, one registry per service instance (tests run several in one process). */
export function createMetrics(sources: { queueDepth: () => number }) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const ingestRequests = new client.Counter({ name: 'ingest_requests_total', help: 'Device requests by route and HTTP status', labelNames: ['route', 'status'], registers: [registry] });
  const readings = new client.Counter({ name: 'ingest_readings_total', help: 'Readings committed', registers: [registry] });
  const batchRows = new client.Histogram({ name: 'ingest_batch_rows', help: 'Rows per flushed batch', buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000, 25000, 50000], registers: [registry] });
  const flushSeconds = new client.Histogram({ name: 'ingest_flush_seconds', help: 'From flush to commit of a batch', buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [registry] });
  const queueDepth = new client.Gauge({ name: 'ingest_queue_rows', help: 'Rows accepted and not yet committed', registers: [registry],
    collect() { this.set(sources.queueDepth()); } });
  const tokenCache = new client.Counter({ name: 'device_token_cache_total', help: 'Device token cache look-ups by result', labelNames: ['result'], registers: [registry] });
  const dbErrors = new client.Counter({ name: 'database_errors_total', help: 'Failed batches and queries', labelNames: ['where'], registers: [registry] });
  const alertsOpened = new client.Counter({ name: 'alerts_opened_total', help: 'Alerts opened', registers: [registry] });
  const webhookAttempts = new client.Counter({ name: 'webhook_attempts_total', help: 'Webhook delivery attempts by outcome (delivered, retry, failed)', labelNames: ['outcome'], registers: [registry] });
  return { registry, ingestRequests, readings, batchRows, flushSeconds, queueDepth, tokenCache, dbErrors, alertsOpened, webhookAttempts };
}

export type Metrics = ReturnType<typeof createMetrics>;
