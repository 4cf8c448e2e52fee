// The fleet simulator as operators run it (the built dist/src/simulator/main.js as a child process) against the
// real service; the assertions read what the service stored.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteDevice, rotateDeviceToken } from '../dist/src/auth/device-registry.js';
import { hashToken } from '../dist/src/auth/device-tokens.js';
import { createUser } from '../dist/src/auth/users.js';
import { ROOT } from './support/cli.js';
import { startTestService, type TestService } from './support/service.js';

const SIMULATOR = path.join(ROOT, 'dist/src/simulator/main.js');
const OWNER = 'fleet-owner@example.com';
const METRICS: Record<string, string[]> = {
  health: ['battery_pct', 'body_temp_c', 'diastolic', 'glucose', 'heart_rate', 'spo2', 'systolic'],
  vehicle: ['engine_temp_c', 'fuel_pct', 'heading_deg', 'impact_g_force', 'speed_kmh'],
  fleet: ['cargo_temp_c', 'fuel_pct', 'heading_deg', 'odometer_km', 'speed_kmh'],
  factory: ['gas_ppm', 'humidity_pct', 'smoke_level', 'temperature_c', 'vibration_mm_s'],
  home_infra: ['humidity_pct', 'power_w', 'temperature_c', 'water_flow_lpm'],
  worker: ['battery_pct', 'body_temp_c', 'heart_rate', 'steps'],
};

interface Run { code: number | null; stdout: string; stderr: string; summary: any }

describe('the fleet simulator', () => {
  let t: TestService;
  let dataDir: string;
  const devicesFile = () => path.join(dataDir, 'simulator', 'devices.json');
  const savedDevices = () => JSON.parse(fs.readFileSync(devicesFile(), 'utf8')) as { id: number; name: string; module: string; token: string }[];
  const liveDevices = async () => (await t.db.query(
    `SELECT d.id, d.module FROM devices d JOIN users u ON u.id = d.owner_id
      WHERE u.email = $1 AND d.deleted_at IS NULL ORDER BY d.id`, [OWNER])).rows as { id: number; module: string }[];

  /** Runs the built simulator; `during` runs while it sends. Never inherits this process's DATABASE_URL. */
  function simulate(args: string[], during?: () => Promise<void>): Promise<Run> {
    const { DATABASE_URL: _ignored, ADMIN_EMAIL: _admin, ...base } = process.env;
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [SIMULATOR, '--url', t.baseUrl, '--owner', OWNER, '--interval-ms', '200', ...args], {
        cwd: ROOT, env: { ...base, DATABASE_URL: t.databaseUrl, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '', stderr = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
      const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`simulator timed out; stderr: ${stderr}`)); }, 40_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        let summary: unknown = null;
        try { summary = JSON.parse(stdout); } catch { /* not JSON */ }
        resolve({ code, stdout, stderr, summary });
      });
      if (during) void during().catch(reject);
    });
  }

  const expectNoTokenPrinted = (run: Run) => {
    for (const d of savedDevices()) {
      expect(run.stdout).not.toContain(d.token);
      expect(run.stderr).not.toContain(d.token);
    }
  };

  beforeAll(async () => {
    t = await startTestService();
    await createUser(t.db, OWNER, 'correct horse battery', 'user');
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'telemetry-sim-'));
  });
  afterAll(async () => {
    await t?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("provisions six devices, one per module, for the owner and stores each module's metrics and GPS", async () => {
    const run = await simulate(['--devices', '6', '--duration-s', '4', '--flag-rate', '0']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.summary).toMatchObject({ devices: 6, owner: OWNER, errors: {}, dropped: 0 });
    expect(run.summary.ok).toBe(run.summary.sent);
    expect(run.summary.ok).toBeGreaterThanOrEqual(6 * 10);

    const devices = await liveDevices();
    expect(devices.map((d) => d.module).sort()).toEqual(Object.keys(METRICS).sort());
    for (const d of devices) {
      const metrics = (await t.db.query('SELECT DISTINCT metric_name FROM telemetry WHERE device_id = $1 ORDER BY 1', [d.id])).rows.map((r) => r.metric_name);
      expect(metrics, d.module).toEqual(METRICS[d.module]);
      const gps = (await t.db.query('SELECT count(*)::int AS n, count(DISTINCT (lat, lng))::int AS places FROM gps_points WHERE device_id = $1', [d.id])).rows[0];
      if (['vehicle', 'fleet', 'worker'].includes(d.module)) {
        expect(gps.n, d.module).toBeGreaterThanOrEqual(10);
        expect(gps.places, `${d.module} moves`).toBeGreaterThan(gps.n / 2);
      } else {
        expect(gps.n, d.module).toBe(0);
      }
    }
    const health = devices.find((d) => d.module === 'health')!;
    const hr = (await t.db.query("SELECT min(metric_value) AS lo, max(metric_value) AS hi, min(unit) AS unit FROM telemetry WHERE device_id = $1 AND metric_name = 'heart_rate'", [health.id])).rows[0];
    expect(hr).toMatchObject({ unit: 'bpm' });
    expect(hr.lo).toBeGreaterThanOrEqual(55);
    expect(hr.hi).toBeLessThanOrEqual(110);
    expect((await t.db.query('SELECT count(*)::int AS n FROM alerts')).rows[0].n).toBe(0);

    expect(fs.statSync(devicesFile()).mode & 0o777).toBe(0o600);
    expect(savedDevices().map((d) => d.id).sort((a, b) => a - b)).toEqual(devices.map((d) => d.id));
    for (const d of savedDevices()) {
      const stored = (await t.db.query('SELECT api_token_hash FROM devices WHERE id = $1', [d.id])).rows[0];
      expect(stored.api_token_hash).toBe(hashToken(d.token));
    }
    expectNoTokenPrinted(run);
  });

  it('reuses the saved devices on the next run, and its flags open alerts that resolve', async () => {
    const before = await liveDevices();
    const run = await simulate(['--devices', '6', '--duration-s', '3', '--flag-rate', '1']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/reused 6, token rotated 0, created 0/);
    expect(await liveDevices()).toEqual(before);
    expect(run.summary.flags_raised).toBeGreaterThanOrEqual(6);
    expect(run.summary.flags_cleared).toBe(run.summary.flags_raised);

    const alerts = (await t.db.query('SELECT device_id, status FROM alerts')).rows as { device_id: number; status: string }[];
    for (const d of before) expect(alerts.some((a) => a.device_id === d.id), `an alert for ${d.module}`).toBe(true);
    // Each event ends with a clearing reading, the last ones when the run stops: nothing stays open.
    expect(alerts.filter((a) => a.status !== 'resolved')).toEqual([]);
    expectNoTokenPrinted(run);
  });

  it('replaces a deleted device and renews a token rotated while it runs', async () => {
    const [gone, rotated] = await liveDevices();
    await deleteDevice(t.db, gone.id);
    const run = await simulate(['--devices', '6', '--duration-s', '4', '--flag-rate', '0'], async () => {
      await new Promise((r) => setTimeout(r, 2000));
      await rotateDeviceToken(t.db, rotated.id);
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/reused 5, token rotated 0, created 1/);
    expect(run.summary.errors['401']).toBeGreaterThanOrEqual(1);
    expect(run.summary.tokens_renewed).toBeGreaterThanOrEqual(1);

    const devices = await liveDevices();
    expect(devices).toHaveLength(6);
    expect(devices.map((d) => d.module).sort()).toEqual(Object.keys(METRICS).sort());
    expect(devices.some((d) => d.id === gone.id)).toBe(false);
    const saved = savedDevices().find((d) => d.id === rotated.id)!;
    const stored = (await t.db.query('SELECT api_token_hash FROM devices WHERE id = $1', [rotated.id])).rows[0];
    expect(stored.api_token_hash).toBe(hashToken(saved.token));
    expect(savedDevices().some((d) => d.id === gone.id)).toBe(false);
    expectNoTokenPrinted(run);
  });

  it('refuses invalid arguments with a message naming the flag, and prints its usage on --help', async () => {
    const bad = await simulate(['--devices', '10001']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--devices must be a whole number from 1 to 10000; got "10001".');
    const rate = await simulate(['--flag-rate', '-1']);
    expect(rate.code).toBe(2);
    expect(rate.stderr).toContain('--flag-rate must be a number from 0 to 1');
    const help = await simulate(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run simulate -- \[flags\]/);
  });
});
