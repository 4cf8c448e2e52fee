import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook } from './webhook-signature.js';

describe('webhook signatures', () => {
  const body = '{"id":1,"type":"alert.opened"}';

  it('is the hex HMAC-SHA256 of "<timestamp>.<body>" under the secret, prefixed sha256=', () => {
    const expected = crypto.createHmac('sha256', 's3cret').update(`1700000000.${body}`).digest('hex');
    expect(signWebhook('s3cret', 1700000000, body)).toBe(`sha256=${expected}`);
  });

  it('verifies its own signature and refuses another secret, another body or another timestamp', () => {
    const sig = signWebhook('s3cret', 1700000000, body);
    expect(verifyWebhook('s3cret', '1700000000', sig, body, 1700000000)).toBe(true);
    expect(verifyWebhook('other', '1700000000', sig, body, 1700000000)).toBe(false);
    expect(verifyWebhook('s3cret', '1700000000', sig, `${body} `, 1700000000)).toBe(false);
    expect(verifyWebhook('s3cret', '1700000001', sig, body, 1700000001)).toBe(false);
  });

  it('refuses a timestamp older than the tolerance, at tolerance + 1 but not at the tolerance', () => {
    const sig = signWebhook('k', 1000, body);
    expect(verifyWebhook('k', '1000', sig, body, 1300, 300)).toBe(true);
    expect(verifyWebhook('k', '1000', sig, body, 1301, 300)).toBe(false);
  });

  it('refuses missing or malformed headers', () => {
    expect(verifyWebhook('k', undefined, 'sha256=00', body, 0)).toBe(false);
    expect(verifyWebhook('k', '0', undefined, body, 0)).toBe(false);
    expect(verifyWebhook('k', 'abc', signWebhook('k', 0, body), body, 0)).toBe(false);
  });
});
