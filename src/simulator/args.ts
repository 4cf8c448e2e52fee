// The simulator's command line: every flag checked up front, with a message saying what is accepted.
import { FLAG_HOLD_READINGS } from './readings.js';

export class SimulatorUsageError extends Error {}

export interface SimulatorOptions {
  devices: number;
  /** null: ADMIN_EMAIL, else the oldest admin. */
  owner: string | null;
  /** null: http://localhost:${PORT} */
  url: string | null;
  intervalMs: number;
  flagRate: number;
  /** null: until SIGINT/SIGTERM. */
  durationS: number | null;
  concurrency: number;
  /** null: Math.random; a number makes the readings reproducible. */
  seed: number | null;
}

export const USAGE = `Usage: npm run simulate -- [flags]
Sends realistic readings from a simulated fleet to the real ingestion endpoint.

  --devices N        devices to simulate, 1 to 10000 (default 6), spread round-robin over the six modules
  --owner EMAIL      owner of the devices (default: ADMIN_EMAIL, else the oldest admin)
  --url URL          service base URL (default http://localhost:$PORT, PORT default 8080)
  --interval-ms MS   time between two readings of one device, 100 to 3600000 (default 2000, +-20 % jitter)
  --flag-rate P      chance, 0 to 1, that a reading starts a flag event (default 0.005, 1 in 200);
                     the flag is held ${FLAG_HOLD_READINGS} readings, then cleared so the alert resolves; 1: a new event as soon as one clears
  --duration-s S     stop after S seconds, 1 to 604800 (default: run until Ctrl-C / SIGTERM)
  --concurrency N    requests in flight at most, 1 to 1024 (default 64)
  --seed N           seed of the random source, for reproducible readings (default: random)
  --help             this text

Devices and their tokens are kept in <DATA_DIR>/simulator/devices.json (mode 0600) and reused by later runs.
Provisioning uses DATABASE_URL, else the embedded PostgreSQL under DATA_DIR (as the CLI does).
`;

const DEFAULTS: SimulatorOptions = {
  devices: 6, owner: null, url: null, intervalMs: 2000, flagRate: 0.005, durationS: null, concurrency: 64, seed: null,
};
const FLAGS = new Set(['devices', 'owner', 'url', 'interval-ms', 'flag-rate', 'duration-s', 'concurrency', 'seed']);

function intIn(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new SimulatorUsageError(`--${name} must be a whole number from ${min} to ${max}; got "${raw}".`);
  }
  return Number(raw);
}

/** Parses argv; returns 'help' for --help. Throws SimulatorUsageError with a message naming the flag. */
export function parseSimulatorArgs(argv: readonly string[]): SimulatorOptions | 'help' {
  const raw = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') return 'help';
    if (!a.startsWith('--')) throw new SimulatorUsageError(`Unexpected argument "${a}".`);
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    if (!FLAGS.has(name)) throw new SimulatorUsageError(`Unknown flag --${name}.`);
    let value: string | undefined;
    if (eq > 0) value = a.slice(eq + 1);
    else { value = argv[i + 1]; i++; }
    if (value === undefined || value === '' || value.startsWith('--')) throw new SimulatorUsageError(`Flag --${name} needs a value.`);
    raw.set(name, value);
  }
  const o: SimulatorOptions = { ...DEFAULTS };
  for (const [name, v] of raw) {
    switch (name) {
      case 'devices': o.devices = intIn(name, v, 1, 10_000); break;
      case 'owner':
        if (!/^[^\s@]{1,64}@[^\s@]{1,255}$/.test(v)) throw new SimulatorUsageError(`--owner must be an email address; got "${v}".`);
        o.owner = v;
        break;
      case 'url': {
        let u: URL;
        try { u = new URL(v); } catch { throw new SimulatorUsageError(`--url must be an http:// or https:// URL; got "${v}".`); }
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new SimulatorUsageError(`--url must be an http:// or https:// URL; got "${v}".`);
        o.url = v.replace(/\/+$/, '');
        break;
      }
      case 'interval-ms': o.intervalMs = intIn(name, v, 100, 3_600_000); break;
      case 'flag-rate': {
        const p = Number(v);
        if (!/^\d*\.?\d+(e-?\d+)?$/i.test(v) || !(p >= 0 && p <= 1)) throw new SimulatorUsageError(`--flag-rate must be a number from 0 to 1; got "${v}".`);
        o.flagRate = p;
        break;
      }
      case 'duration-s': o.durationS = intIn(name, v, 1, 604_800); break;
      case 'concurrency': o.concurrency = intIn(name, v, 1, 1024); break;
      case 'seed': o.seed = intIn(name, v, 0, 2 ** 32 - 1); break;
    }
  }
  return o;
}
