import { describe, expect, it } from 'vitest';
import { parseSimulatorArgs, SimulatorUsageError, type SimulatorOptions } from './args.js';

const parse = (...argv: string[]) => parseSimulatorArgs(argv) as SimulatorOptions;
const refusal = (...argv: string[]) => {
  try { parseSimulatorArgs(argv); } catch (err) { if (err instanceof SimulatorUsageError) return err.message; throw err; }
  throw new Error(`accepted ${argv.join(' ')}`);
};

describe('simulator arguments', () => {
  it('default to six devices every 2 s, 1 flag event in 200 readings, 64 in flight, no time limit', () => {
    expect(parse()).toEqual({ devices: 6, owner: null, url: null, intervalMs: 2000, flagRate: 0.005, durationS: null, concurrency: 64, seed: null });
  });

  it('accept --devices from 1 to 10000 and refuse 0 and 10001', () => {
    expect(parse('--devices', '1').devices).toBe(1);
    expect(parse('--devices=10000').devices).toBe(10_000);
    expect(refusal('--devices', '0')).toBe('--devices must be a whole number from 1 to 10000; got "0".');
    expect(refusal('--devices', '10001')).toBe('--devices must be a whole number from 1 to 10000; got "10001".');
    expect(refusal('--devices', '2.5')).toMatch(/^--devices must be a whole number/);
  });

  it('accept a flag rate from 0 to 1 only', () => {
    expect(parse('--flag-rate', '0').flagRate).toBe(0);
    expect(parse('--flag-rate', '1').flagRate).toBe(1);
    expect(parse('--flag-rate', '.02').flagRate).toBe(0.02);
    expect(refusal('--flag-rate', '1.01')).toBe('--flag-rate must be a number from 0 to 1; got "1.01".');
    expect(refusal('--flag-rate', '-0.1')).toMatch(/^--flag-rate must be a number from 0 to 1/);
  });

  it('check the interval, duration, concurrency, owner and URL', () => {
    expect(parse('--interval-ms', '100').intervalMs).toBe(100);
    expect(refusal('--interval-ms', '99')).toMatch(/^--interval-ms must be a whole number from 100/);
    expect(parse('--duration-s', '1').durationS).toBe(1);
    expect(refusal('--duration-s', '0')).toMatch(/^--duration-s must be/);
    expect(refusal('--concurrency', '1025')).toMatch(/^--concurrency must be a whole number from 1 to 1024/);
    expect(parse('--owner', 'ops@example.com').owner).toBe('ops@example.com');
    expect(refusal('--owner', 'ops')).toBe('--owner must be an email address; got "ops".');
    expect(parse('--url', 'https://telemetry.example.com/').url).toBe('https://telemetry.example.com');
    expect(refusal('--url', 'ftp://x')).toMatch(/^--url must be an http/);
  });

  it('refuse unknown flags, stray words and flags without a value, and answer --help', () => {
    expect(refusal('--device', '6')).toBe('Unknown flag --device.');
    expect(refusal('6')).toBe('Unexpected argument "6".');
    expect(refusal('--devices')).toBe('Flag --devices needs a value.');
    expect(refusal('--devices', '--owner', 'a@b')).toBe('Flag --devices needs a value.');
    expect(parseSimulatorArgs(['--devices', '3', '--help'])).toBe('help');
  });
});
