// The simulated fleet's devices: provisioned through the same database access as the CLI, kept with their
// tokens in <DATA_DIR>/simulator/devices.json (mode 0600) and reused by later runs while they still work.
import fs from 'node:fs';
import path from 'node:path';
import { createDevice, rotateDeviceToken } from '../auth/device-registry.js';
import { generateToken, hashToken } from '../auth/device-tokens.js';
import { UserInputError } from '../auth/users.js';
import { MODULES, type Module } from '../ingest/modules.js';
import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';

export interface SimDevice { id: number; name: string; module: Module; token: string }
export interface ProvisionStats { reused: number; rotated: number; created: number }

export function devicesFilePath(dataDir: string): string {
  return path.join(dataDir, 'simulator', 'devices.json');
}

/** The saved devices; a missing or unreadable file is an empty fleet (everything is then re-created). */
export function readDevicesFile(file: string): SimDevice[] {
  let parsed: unknown;
  try { parsed = JSON.parse(fs.readFileSync(file, 'utf8')); } catch { return []; }
  if (!Array.isArray(parsed)) return [];
  return parsed.filter((d): d is SimDevice => typeof d === 'object' && d !== null &&
    Number.isInteger(d.id) && typeof d.name === 'string' && (MODULES as readonly string[]).includes(d.module) &&
    typeof d.token === 'string' && /^[0-9a-f]{64}$/.test(d.token));
}

/** Writes the file atomically with mode 0600 (tokens are secrets), in a 0700 folder. */
export function writeDevicesFile(file: string, devices: readonly SimDevice[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify(devices.map(({ id, name, module, token }) => ({ id, name, module, token })), null, 2)}\n`);
  } finally {
    fs.closeSync(fd);
  }
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

/** --owner, else ADMIN_EMAIL, else the oldest enabled admin (the one the service bootstrapped). */
export async function resolveOwner(pool: Pool, owner: string | null, adminEmail: string | null): Promise<{ id: number; email: string }> {
  const email = owner ?? adminEmail;
  if (email !== null) {
    const res = await pool.query<{ id: number; email: string; disabled_at: Date | null }>(q.findUserByEmail, [email]);
    if (!res.rows[0]) throw new UserInputError(`No user with email ${email}.`);
    return { id: res.rows[0].id, email: res.rows[0].email };
  }
  const res = await pool.query<{ id: number; email: string }>(
    "SELECT id, email FROM users WHERE role = 'admin' AND disabled_at IS NULL ORDER BY id LIMIT 1");
  if (!res.rows[0]) throw new UserInputError('No admin user yet: start the service once (it creates the first admin) or pass --owner EMAIL.');
  return res.rows[0];
}

interface StoredDevice { id: number; module: Module; owner_id: number; api_token_hash: string; deleted: boolean }

async function lookUp(pool: Pool, ids: number[]): Promise<Map<number, StoredDevice>> {
  const res = await pool.query<StoredDevice>(
    'SELECT id, module, owner_id, api_token_hash, deleted_at IS NOT NULL AS deleted FROM devices WHERE id = ANY($1::int8[])', [ids]);
  return new Map(res.rows.map((r) => [r.id, r]));
}

/** The module of slot i: round-robin, so any six consecutive devices cover every module. */
export const moduleOfSlot = (i: number): Module => MODULES[i % MODULES.length];

const CREATE_CHUNK = 1000;

/**
 * `count` devices of the owner, slot i of module moduleOfSlot(i). Saved devices still live and owned by the
 * owner are reused (a token that no longer matches is rotated); the rest are created, in bulk (the
 * `device:bulk-create` insert). Returns the devices for the run and the list to save: those plus saved devices
 * still live that this run does not use (another owner's, or beyond `count`).
 */
export async function provisionDevices(pool: Pool, ownerId: number, count: number, saved: readonly SimDevice[]): Promise<{ devices: SimDevice[]; keep: SimDevice[]; stats: ProvisionStats }> {
  const stored = await lookUp(pool, saved.map((d) => d.id));
  const live = saved.filter((d) => { const s = stored.get(d.id); return s !== undefined && !s.deleted && s.module === d.module; });
  const reusable = new Map<Module, SimDevice[]>(MODULES.map((m) => [m, []]));
  for (const d of live) if (stored.get(d.id)!.owner_id === ownerId) reusable.get(d.module)!.push(d);
  const used = new Set<number>();
  const stats: ProvisionStats = { reused: 0, rotated: 0, created: 0 };
  const devices: SimDevice[] = new Array(count);
  const toCreate = new Map<Module, number[]>(MODULES.map((m) => [m, []]));
  for (let i = 0; i < count; i++) {
    const module = moduleOfSlot(i);
    const candidate = reusable.get(module)!.shift();
    if (!candidate) { toCreate.get(module)!.push(i); continue; }
    used.add(candidate.id);
    if (stored.get(candidate.id)!.api_token_hash === hashToken(candidate.token)) {
      devices[i] = candidate;
      stats.reused++;
    } else {
      devices[i] = { ...candidate, token: (await rotateDeviceToken(pool, candidate.id)).token };
      stats.rotated++;
    }
  }
  for (const [module, slots] of toCreate) {
    for (let from = 0; from < slots.length; from += CREATE_CHUNK) {
      const chunk = slots.slice(from, from + CREATE_CHUNK);
      const names = chunk.map((i) => `sim-${module}-${i + 1}`);
      const tokens = names.map(() => generateToken());
      const res = await pool.query<{ id: number; name: string }>(q.insertDevicesBulk, [ownerId, names, module, tokens.map(hashToken)]);
      const idByName = new Map(res.rows.map((r) => [r.name, r.id]));
      chunk.forEach((slot, k) => { devices[slot] = { id: idByName.get(names[k])!, name: names[k], module, token: tokens[k] }; });
      stats.created += chunk.length;
    }
  }
  return { devices, keep: [...devices, ...live.filter((d) => !used.has(d.id))], stats };
}

/**
 * A device whose token was refused (401): a new token when the device still exists, else a new device
 * in its place (same name and module).
 */
export async function renewDevice(pool: Pool, ownerId: number, device: SimDevice): Promise<SimDevice> {
  const s = (await lookUp(pool, [device.id])).get(device.id);
  if (s && !s.deleted && s.owner_id === ownerId) return { ...device, token: (await rotateDeviceToken(pool, device.id)).token };
  return createDevice(pool, ownerId, device.name, device.module);
}
