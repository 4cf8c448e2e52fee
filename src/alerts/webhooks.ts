// A user's webhook: where their alert and device events are POSTed, and the secret that signs them.
// Shared by the mobile API (src/mobile/webhook-routes.ts) and the CLI (webhook:* commands).
import crypto from 'node:crypto';
import type { Pool } from '../store/db.js';
import * as q from '../store/queries.js';

export const MAX_URL_LENGTH = 2048;
export const SECRET_MIN_LENGTH = 16;
export const SECRET_MAX_LENGTH = 256;

export interface Webhook { url: string; created_at: Date; updated_at: Date }
export interface WebhookStatus extends Webhook {
  pending: number;
  failed: number;
  last_delivered_at: Date | null;
  last_error: string | null;
}

/** The problem with a webhook URL, or null. Only http and https; credentials in the URL are refused (use the secret). */
export function webhookUrlProblem(url: unknown): string | null {
  if (typeof url !== 'string' || url.length === 0) return 'url is required: the http(s) address that receives the POSTs.';
  if (url.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters.`;
  let u: URL;
  try { u = new URL(url); } catch { return `url must be an absolute http:// or https:// URL; got ${JSON.stringify(url.slice(0, 80))}.`; }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `url must use http or https; got ${JSON.stringify(u.protocol)}.`;
  if (u.username || u.password) return 'url must not contain a user name or password; deliveries are authenticated by their signature.';
  if (u.hash) return 'url must not contain a #fragment.';
  return null;
}

export function webhookSecretProblem(secret: unknown): string | null {
  if (secret === undefined || secret === null) return null;
  if (typeof secret !== 'string' || secret.length < SECRET_MIN_LENGTH || secret.length > SECRET_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(secret)) {
    return `secret must be ${SECRET_MIN_LENGTH} to ${SECRET_MAX_LENGTH} printable ASCII characters without spaces, or left out to have one generated.`;
  }
  return null;
}

/** The first problem with a webhook's url and optional secret, or null: the one check of the API, CLI and pages. */
export function webhookInputProblem(url: unknown, secret: unknown): string | null {
  return webhookUrlProblem(url) ?? webhookSecretProblem(secret);
}

/** Sets (creates or replaces) a user's webhook; returns the secret, generated when none was given. */
export async function setWebhook(pool: Pool, userId: number, url: string, secret?: string | null): Promise<Webhook & { secret: string }> {
  const s = secret ?? crypto.randomBytes(32).toString('hex');
  const res = await pool.query<Webhook>(q.upsertWebhook, [userId, url, s]);
  return { ...res.rows[0], secret: s };
}

export async function getWebhook(pool: Pool, userId: number): Promise<WebhookStatus | null> {
  const res = await pool.query<WebhookStatus>(q.webhookStatus, [userId]);
  return res.rows[0] ?? null;
}

/** Removes the webhook and its pending deliveries; false when there was none. */
export async function removeWebhook(pool: Pool, userId: number): Promise<boolean> {
  return ((await pool.query(q.deleteWebhook, [userId])).rowCount ?? 0) > 0;
}
