import type { Pool } from '../store/db.js';
import { inTransaction } from '../store/db.js';
import * as q from '../store/queries.js';
import { MODULES, type Module } from '../ingest/modules.js';
import { generateToken, hashToken } from './device-tokens.js';
import { UserInputError } from './users.js';

export interface CreatedDevice { id: number; name: string; module: Module; token: string }

export function checkModule(module: string): Module {
  if (!(MODULES as readonly string[]).includes(module)) {
    throw new UserInputError(`Module must be one of ${MODULES.join(', ')}; got "${module}".`);
  }
  return module as Module;
}

/** Creates a device and returns its token: the only time the plaintext exists outside the device. */
export async function createDevice(pool: Pool, ownerId: number, name: string, module: string): Promise<CreatedDevice> {
  const m = checkModule(module);
  if (!name || name.length > 200) throw new UserInputError('Device name must be 1 to 200 characters.');
  const token = generateToken();
  const res = await pool.query<{ id: number; name: string; module: Module }>(q.insertDevice, [ownerId, name, m, hashToken(token)]);
  return { ...res.rows[0], token };
}

/** Replaces the token; the old one is refused at once on every instance (NOTIFY in the same transaction). */
export async function rotateDeviceToken(pool: Pool, deviceId: number): Promise<{ id: number; token: string }> {
  const token = generateToken();
  return inTransaction(pool, async (c) => {
    const res = await c.query<{ id: number; old_hash: string }>(q.rotateDeviceToken, [deviceId, hashToken(token)]);
    if (!res.rows[0]) throw new UserInputError(`No device with id ${deviceId}.`);
    await c.query(q.notifyTokenRevoked, [res.rows[0].old_hash]);
    return { id: res.rows[0].id, token };
  });
}

export async function deleteDevice(pool: Pool, deviceId: number): Promise<{ id: number }> {
  return inTransaction(pool, async (c) => {
    const res = await c.query<{ id: number; api_token_hash: string }>(q.deleteDevice, [deviceId]);
    if (!res.rows[0]) throw new UserInputError(`No device with id ${deviceId}.`);
    await c.query(q.notifyTokenRevoked, [res.rows[0].api_token_hash]);
    return { id: res.rows[0].id };
  });
}
