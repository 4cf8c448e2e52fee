// Every environment variable the service reads, with its default and accepted range.
// load.ts is the only reader of process.env; everything else receives a frozen Config.

export type IntSpec = { kind: 'int'; default: number | null; min: number; max: number; help: string };
export type StringSpec = { kind: 'string'; default: string | null; help: string; pattern?: RegExp };
export type BoolSpec = { kind: 'bool'; default: boolean; help: string };
export type EnumSpec = { kind: 'enum'; default: string; values: readonly string[]; help: string };
export type VariableSpec = IntSpec | StringSpec | BoolSpec | EnumSpec;

const int = (def: number | null, min: number, max: number, help: string): IntSpec =>
  ({ kind: 'int', default: def, min, max, help });
const str = (def: string | null, help: string, pattern?: RegExp): StringSpec =>
  ({ kind: 'string', default: def, help, pattern });

export const VARIABLES = {
  PORT: int(8080, 0, 65535, 'HTTP port (0 picks a free one)'),
  HOST: str('0.0.0.0', 'address to listen on'),
  DATABASE_URL: str(null, 'postgres:// URL; unset means the embedded PostgreSQL', /^postgres(ql)?:\/\//),
  DATA_DIR: str('./data', 'where the embedded PostgreSQL keeps its files (DATA_DIR/postgres)'),
  EMBEDDED_PG_PORT: int(54320, 1024, 65535, 'port of the embedded PostgreSQL (not 5432, to avoid a system server)'),
  INGEST_WORKERS: int(null, 1, 64, 'ingest worker threads, each with one database connection (default: 2 per CPU, 2 to 8)'),
  BATCH_MAX_ROWS: int(10000, 1, 1_000_000, 'rows that make a batch flush at once'),
  BATCH_MAX_WAIT_MS: int(5, 0, 10_000, 'longest a row waits for its batch to fill'),
  QUEUE_MAX_ROWS: int(200_000, 3, 100_000_000, 'rows accepted but not yet committed; beyond this ingest answers 503'),
  MAX_BODY_BYTES: int(1_048_576, 64, 64 * 1_048_576, 'largest request body, counted while streaming'),
  MAX_READINGS_PER_REQUEST: int(5000, 1, 1_000_000, 'largest number of readings in one request'),
  DEVICE_RATE_LIMIT: int(0, 0, 1_000_000, 'requests per second per device; 0 turns the limit off'),
  TOKEN_CACHE_SIZE: int(100_000, 1, 10_000_000, 'device tokens kept in the in-memory cache'),
  OFFLINE_AFTER_S: int(300, 1, 31_536_000, 'seconds without contact before a device is offline'),
  SWEEP_INTERVAL_MS: int(5000, 100, 3_600_000, 'how often each instance tries to run the offline sweep (one at a time sweeps)'),
  WEBHOOK_POLL_MS: int(1000, 50, 60_000, 'how often the webhook dispatcher looks for due deliveries (a new alert also wakes it at once)'),
  WEBHOOK_RETRY_BASE_MS: int(1000, 10, 3_600_000, 'first retry delay of a failed webhook delivery; doubles per attempt'),
  WEBHOOK_RETRY_MAX_MS: int(3_600_000, 1000, 86_400_000, 'longest delay between two attempts of one delivery'),
  WEBHOOK_GIVE_UP_H: int(72, 1, 720, 'hours after which an undelivered webhook event is marked failed'),
  WEBHOOK_TIMEOUT_MS: int(10_000, 100, 120_000, 'time a webhook receiver has to answer one delivery'),
  LIVE_RECHECK_MS: int(10_000, 100, 600_000, 'how often each open /api/live socket has its session or token checked again'),
  MOBILE_TOKEN_TTL_DAYS: int(30, 1, 3650, 'lifetime of a mobile access token'),
  SESSION_IDLE_MIN: int(30, 1, 10_080, 'browser session idle timeout'),
  SESSION_ABSOLUTE_H: int(12, 1, 720, 'browser session absolute timeout'),
  COOKIE_SECURE: { kind: 'bool', default: false, help: 'mark cookies Secure with the __Host- prefix' } as BoolSpec,
  TRUST_PROXY: { kind: 'bool', default: false, help: 'take the client address from the last X-Forwarded-For entry (one trusted proxy in front)' } as BoolSpec,
  TLS_KEY_FILE: str(null, 'PEM private key; with TLS_CERT_FILE serves HTTPS'),
  TLS_CERT_FILE: str(null, 'PEM certificate; with TLS_KEY_FILE serves HTTPS'),
  RETENTION_DAYS: int(0, 0, 36_500, 'days of time-series data kept; 0 keeps everything'),
  COMPRESS_AFTER_DAYS: int(7, 1, 36_500, 'TimescaleDB only: compress chunks older than this'),
  PARTITION_DAYS_AHEAD: int(3, 1, 365, 'native partitions only: daily partitions created ahead of today'),
  LOG_LEVEL: { kind: 'enum', default: 'info', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], help: 'pino log level' } as EnumSpec,
  ADMIN_EMAIL: str(null, 'email of the admin created on first start'),
  ADMIN_PASSWORD: str(null, 'password of the admin created on first start (random when unset)'),
} as const satisfies Record<string, VariableSpec>;

export type VariableName = keyof typeof VARIABLES;
