import crypto from 'node:crypto';

const FORM_ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * Ids of one-time forms (add device, rotate token) already sent. A browser reload of the token page re-sends
 * its POST; the second send of an id is refused, so a reload neither creates a second device nor rotates the
 * token again (it lands on a page without a token). In memory, per instance: bounded by count and age.
 */
export class OnceForms {
  private readonly claimed = new Map<string, number>();

  constructor(private readonly ttlMs = 3_600_000, private readonly maxIds = 10_000, private readonly now: () => number = Date.now) {}

  /** A fresh id for a form's hidden `_form` field. */
  issue(): string {
    return crypto.randomBytes(16).toString('base64url');
  }

  /** True the first time an id is claimed (or when the form carries none); false for a repeat. */
  claim(id: string | null): boolean {
    if (id === null || !FORM_ID.test(id)) return true;
    const t = this.now();
    this.prune(t);
    if (this.claimed.has(id)) return false;
    this.claimed.set(id, t + this.ttlMs);
    return true;
  }

  /** The form was refused (invalid input): the same form may be sent again. */
  release(id: string | null): void {
    if (id !== null) this.claimed.delete(id);
  }

  // Insertion order is expiry order (one TTL for all): drop from the front.
  private prune(t: number): void {
    for (const [id, expires] of this.claimed) {
      if (expires > t && this.claimed.size < this.maxIds) break;
      this.claimed.delete(id);
    }
  }
}
