import pg from 'pg';

export type Pool = pg.Pool;

/** Server-side limit on any one statement of the service (migrations excepted: they run on their own client). */
export const STATEMENT_TIMEOUT_MS = 30_000;
export type Client = pg.PoolClient | pg.Client;

// Keep bigint ids and counts as JS numbers: every id and count here stays far below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));

/** The main thread's pool: auth look-ups, readiness, maintenance. Ingest workers hold their own connections. */
export function createPool(databaseUrl: string, max = 8): Pool {
  // A stalled database must end in an error (answered 503), never in a request that hangs forever.
  const pool = new pg.Pool({
    connectionString: databaseUrl, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 5_000,
    statement_timeout: STATEMENT_TIMEOUT_MS,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/** Runs fn inside BEGIN/COMMIT on one client, rolling back on any error. */
export async function inTransaction<T>(pool: Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Named SQLSTATEs this service reacts to. */
export const SqlState = {
  uniqueViolation: '23505',
  checkViolation: '23514',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  untranslatableCharacter: '22P05',
  characterNotInRepertoire: '22021',
} as const;

export function sqlState(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}
