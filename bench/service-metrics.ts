// The service's own view of a workload, from /metrics before and after it: how many batches it flushed,
// how large they were and how long each took from flush to commit.

export interface BatchCounters { batches: number; rows: number; flushSeconds: number }
export interface BatchStats { batches: number; avgRows: number; avgFlushMs: number }

const sample = (text: string, name: string): number => {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
};

export async function readBatchCounters(baseUrl: string): Promise<BatchCounters> {
  const text = await (await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  return {
    batches: sample(text, 'ingest_batch_rows_count'),
    rows: sample(text, 'ingest_batch_rows_sum'),
    flushSeconds: sample(text, 'ingest_flush_seconds_sum'),
  };
}

export function batchStatsBetween(before: BatchCounters, after: BatchCounters): BatchStats {
  const batches = after.batches - before.batches;
  return {
    batches,
    avgRows: batches > 0 ? (after.rows - before.rows) / batches : 0,
    avgFlushMs: batches > 0 ? ((after.flushSeconds - before.flushSeconds) * 1000) / batches : 0,
  };
}
