// The database's own ceiling for this table: binary COPY of W2-shaped rows (time, device_id, metric_name,
// metric_value, unit) in batches the size of the service's, one transaction per batch, on as many concurrent
// connections as the service has ingest workers. Encoding is timed too, as the workers must do it as well.
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { BinaryCopyWriter } from '../src/store/copy-binary.js';
import * as q from '../src/store/queries.js';
import { METRICS, metricValue, seededRandom } from './workloads.js';

export interface RawCopyOptions {
  databaseUrl: string;
  deviceIds: readonly number[];
  prefix: string;
  connections: number;
  batchRows: number;
  totalRows: number;
  /** Stop starting new batches after this long, even short of totalRows. */
  maxMs: number;
  /** Readings per simulated request: consecutive rows of one device, as in a W2 body. */
  readingsPerRequest: number;
}

export interface RawCopyResult { rows: number; batches: number; seconds: number; rowsPerS: number }

function copyIn(c: pg.Client, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = c.query(copyFrom(q.copyTelemetry));
    stream.on('error', reject);
    stream.on('finish', resolve);
    stream.end(data);
  });
}

export async function measureRawCopy(o: RawCopyOptions): Promise<RawCopyResult> {
  const names = METRICS.map((m) => Buffer.from(o.prefix + m.name));
  const units = METRICS.map((m) => Buffer.from(m.unit));
  const rnd = seededRandom(3);
  const clients = await Promise.all(Array.from({ length: o.connections }, async () => {
    const c = new pg.Client({ connectionString: o.databaseUrl, application_name: 'telemetry-bench-copy' });
    await c.connect();
    return c;
  }));

  let claimed = 0;
  let batches = 0;
  const started = performance.now();
  const deadline = started + o.maxMs;
  const encode = (first: number, rows: number, nowMs: number): Buffer => {
    const w = new BinaryCopyWriter(rows * 48 + 64);
    for (let i = 0; i < rows; i++) {
      const r = first + i;
      const j = r % o.readingsPerRequest;
      const device = o.deviceIds[Math.floor(r / o.readingsPerRequest) % o.deviceIds.length];
      const m = j % METRICS.length;
      const t = nowMs - (o.readingsPerRequest / METRICS.length - Math.floor(j / METRICS.length)) * 250;
      w.startRow(5).timestamptz(t).int8(device).textBytes(names[m]).float8(metricValue(m, rnd)).textBytes(units[m]);
    }
    return w.finish();
  };
  const loop = async (c: pg.Client) => {
    while (claimed < o.totalRows && performance.now() < deadline) {
      const first = claimed;
      const rows = Math.min(o.batchRows, o.totalRows - first);
      claimed += rows;
      const data = encode(first, rows, Date.now());
      await c.query('BEGIN');
      try {
        await copyIn(c, data);
        await c.query('COMMIT');
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {});
        throw err;
      }
      batches++;
    }
  };
  try {
    await Promise.all(clients.map(loop));
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
  const seconds = (performance.now() - started) / 1000;
  return { rows: claimed, batches, seconds, rowsPerS: claimed / seconds };
}
