import crypto from 'node:crypto';

// Every delivery carries `X-Webhook-Timestamp: <unix seconds>` and
// `X-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`. The timestamp is signed too, so a
// receiver that rejects old timestamps cannot be fed a replayed delivery.

export const SIGNATURE_HEADER = 'X-Signature';
export const TIMESTAMP_HEADER = 'X-Webhook-Timestamp';
/** How old a signed timestamp a receiver should accept by default (5 minutes, as widely used). */
export const DEFAULT_TOLERANCE_S = 300;

export function signWebhook(secret: string, timestampS: number, body: string): string {
  return `sha256=${crypto.createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex')}`;
}

/**
 * The receiver's check, exported for tests and as the reference for the README's example: the signature
 * matches in constant time and the timestamp is within toleranceS of nowS.
 */
export function verifyWebhook(secret: string, timestampHeader: string | undefined, signatureHeader: string | undefined, body: string,
  nowS = Math.floor(Date.now() / 1000), toleranceS = DEFAULT_TOLERANCE_S): boolean {
  if (!timestampHeader || !signatureHeader || !/^\d{1,12}$/.test(timestampHeader)) return false;
  const ts = Number(timestampHeader);
  if (Math.abs(nowS - ts) > toleranceS) return false;
  const expected = Buffer.from(signWebhook(secret, ts, body));
  const given = Buffer.from(signatureHeader);
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
