import bcrypt from '@node-rs/bcrypt';

export const BCRYPT_COST = 12;
export const PASSWORD_MIN_BYTES = 8;
// bcrypt reads only the first 72 bytes; a longer password is refused rather than silently truncated.
export const PASSWORD_MAX_BYTES = 72;

export function passwordProblem(password: string): string | null {
  const bytes = Buffer.byteLength(password, 'utf8');
  if (bytes < PASSWORD_MIN_BYTES) return `Password must be at least ${PASSWORD_MIN_BYTES} bytes.`;
  if (bytes > PASSWORD_MAX_BYTES) return `Password must be at most ${PASSWORD_MAX_BYTES} bytes (bcrypt ignores the rest); choose a shorter one.`;
  return null;
}

/** Runs on libuv's thread pool, never on the event loop (about 200 ms of CPU at cost 12). */
export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, BCRYPT_COST);
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcrypt.verify(password, hash);
}
