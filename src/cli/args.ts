export class CliUsageError extends Error {}

/** Flags that may stand alone, meaning "true" (`rule:create ... --disabled`). */
const SWITCHES = new Set(['disabled']);

/** Parses `--name value` pairs; every flag takes a value, except that a switch alone means "true". */
export function parseFlags(argv: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new CliUsageError(`Unexpected argument "${a}".`);
    const eq = a.indexOf('=');
    if (eq > 0) { flags[a.slice(2, eq)] = a.slice(eq + 1); continue; }
    const v = argv[i + 1];
    if ((v === undefined || v.startsWith('--')) && SWITCHES.has(a.slice(2))) { flags[a.slice(2)] = 'true'; continue; }
    if (v === undefined || v.startsWith('--')) throw new CliUsageError(`Flag ${a} needs a value.`);
    flags[a.slice(2)] = v;
    i++;
  }
  return flags;
}

export function required(flags: Record<string, string>, name: string): string {
  const v = flags[name];
  if (v === undefined || v === '') throw new CliUsageError(`Missing --${name}.`);
  return v;
}

export function positiveInt(flags: Record<string, string>, name: string): number {
  const v = required(flags, name);
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new CliUsageError(`--${name} must be a positive whole number; got "${v}".`);
  return Number(v);
}

/** A progress bar on stderr, so stdout stays pure JSON. */
export function progress(done: number, total: number): void {
  if (!process.stderr.isTTY && done !== total && done % Math.max(1, Math.floor(total / 10)) !== 0) return;
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stderr.write(`\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total}${done === total ? '\n' : ''}`);
}
