import { Piscina } from 'piscina';
import type { BatchPayload } from '../ingest/batch-format.js';
import type { BatchOutcome } from '../ingest/batcher.js';

export interface IngestPool {
  run(payload: BatchPayload, transferList: ArrayBuffer[]): Promise<BatchOutcome>;
  readonly threads: number;
  /** Worker threads currently alive; /readyz wants all of them. */
  aliveThreads(): number;
  close(): Promise<void>;
}

/**
 * A fixed pool of ingest workers, each with its own database connection. One task per batch, never per
 * request. Threads are kept alive (no idle timeout) so connections are not re-opened under bursty load.
 */
export function createIngestPool(databaseUrl: string, threads: number): IngestPool {
  const pool = new Piscina({
    filename: new URL('./ingest-worker.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    concurrentTasksPerWorker: 1,
    // Piscina's default ('sync') parks an idle thread in Atomics.wait, so its connection's notifications (rule
    // changes, sql/008) would wait for the next batch and arrive too late for it. Batches take milliseconds; the
    // message-port hand-off costs microseconds.
    atomics: 'disabled',
    workerData: { databaseUrl },
  });
  return {
    threads,
    aliveThreads: () => pool.threads.length,
    run: (payload, transferList) => pool.run(payload, { transferList }) as Promise<BatchOutcome>,
    close: () => pool.close({ force: false }),
  };
}
