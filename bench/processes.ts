// Child processes of the bench (the real service, the bare uWS server) and their memory, sampled from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/ of the built project: bench/ and src/ sit side by side under it. */
export const DIST_DIR = path.resolve(here, '..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface Child {
  proc: ChildProcess;
  pid: number;
  port: number;
  /** Last lines of stderr, for the report when the child misbehaves. */
  stderrTail(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  stop(timeoutMs?: number): Promise<number | null>;
}

function wrap(proc: ChildProcess, port: number): Child {
  let tail = '';
  proc.stderr?.on('data', (d: Buffer) => { tail = (tail + d.toString()).slice(-4000); });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const stop = async (timeoutMs = 15_000) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    try { return await exited; } finally { clearTimeout(timer); }
  };
  return { proc, pid: proc.pid!, port, stderrTail: () => tail, exited, stop };
}

async function waitForHttp(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) throw new Error(`child exited with ${child.proc.exitCode} before answering ${url}:\n${child.stderrTail()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms:\n${child.stderrTail()}`);
}

/** `node dist/src/main.js` on a free port, ready once /readyz answers 200. */
export async function startServiceChild(databaseUrl: string, nodeArgs: string[] = []): Promise<Child> {
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn',
    ADMIN_EMAIL: 'bench-admin@example.com', ADMIN_PASSWORD: 'bench-admin-password',
  };
  const proc = spawn(process.execPath, [...nodeArgs, path.join(DIST_DIR, 'src', 'main.js')], { env, stdio: ['ignore', 'inherit', 'pipe'] });
  const child = wrap(proc, port);
  try {
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, child, 30_000);
  } catch (err) {
    await child.stop(2000);
    throw err;
  }
  return child;
}

/** bench/bare-uws.js: the floor of what uWS costs, with none of the service's work. */
export async function startBareUwsChild(): Promise<Child> {
  const port = await freePort();
  const proc = spawn(process.execPath, [path.join(here, 'bare-uws.js')], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'inherit', 'pipe'] });
  const child = wrap(proc, port);
  try {
    await waitForHttp(`http://127.0.0.1:${port}/`, child, 10_000);
  } catch (err) {
    await child.stop(2000);
    throw err;
  }
  return child;
}

/** Resident memory of one process in bytes (the worker threads live inside it), or null off Linux. */
export function readRssBytes(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

// /proc/<pid>/stat counts CPU time in clock ticks, 100 per second on Linux.
const CLOCK_TICKS_PER_S = 100;

/** User + system CPU seconds a process has used so far (all its threads), or null off Linux. */
export function readCpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `intervalMs`; `peak()` is the largest sample since `reset()`. */
export class RssSampler {
  private peakBytes: number | null = null;
  private timer: NodeJS.Timeout;

  constructor(private readonly pid: number, intervalMs = 100) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    const rss = readRssBytes(this.pid);
    if (rss !== null && (this.peakBytes === null || rss > this.peakBytes)) this.peakBytes = rss;
  }

  reset(): void { this.peakBytes = null; this.sample(); }
  peak(): number | null { this.sample(); return this.peakBytes; }
  stop(): void { clearInterval(this.timer); }
}
