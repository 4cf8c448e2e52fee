import pg from 'pg';

export interface Listener {
  /** Resolves once the first LISTEN is in place. */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Shown in pg_stat_activity. */
  name: string;
  /** Handlers by channel name. */
  channels: Record<string, (payload: string) => void>;
  /** After every (re)connection: notices sent while disconnected are lost, so callers resynchronise here. */
  onConnect?: () => void;
  log: (msg: string) => void;
}

const RECONNECT_MS = 1000;

/** A dedicated connection LISTENing on some channels, reconnecting a second after it is lost. */
export function listen(databaseUrl: string, options: ListenOptions): Listener {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => { markReady = r; });

  const connect = async () => {
    const c = new pg.Client({ connectionString: databaseUrl, application_name: options.name });
    c.on('notification', (msg) => options.channels[msg.channel]?.(msg.payload ?? ''));
    c.on('error', () => reconnect(c));
    c.on('end', () => reconnect(c));
    try {
      await c.connect();
      for (const channel of Object.keys(options.channels)) await c.query(`LISTEN ${channel}`);
      client = c;
      options.onConnect?.();
      markReady();
    } catch (err) {
      options.log(`${options.name}: ${(err as Error).message}`);
      reconnect(c);
    }
  };
  const reconnect = (c: pg.Client) => {
    if (closed || retry) return;
    if (client === c) client = null;
    c.end().catch(() => {});
    retry = setTimeout(() => { retry = null; void connect(); }, RECONNECT_MS);
  };
  void connect();
  return {
    ready,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
