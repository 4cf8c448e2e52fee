// Parses the three accepted recorded_at forms into epoch milliseconds; returns a reason string on failure.

export const MIN_RECORDED_AT_MS = Date.UTC(2000, 0, 1);
export const MAX_FUTURE_MS = 24 * 3600 * 1000;
// Epoch seconds stay below 1e11 until the year 5138, epoch milliseconds pass it in 1973: the magnitude tells them apart.
const EPOCH_MS_THRESHOLD = 1e11;

const PLAIN = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})$/i;

export type TimeResult = { ok: true; ms: number } | { ok: false; reason: string };

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

function fromParts(y: string, mo: string, d: string, h: string, mi: string, s: string, fraction: string | undefined, offsetMin: number): number | null {
  const Y = +y, M = +mo, D = +d, H = +h, MI = +mi, S = +s;
  if (M < 1 || M > 12 || D < 1 || H > 23 || MI > 59 || S > 59) return null;
  // Date.UTC would roll 2026-02-31 over to March: refuse dates that do not exist (no Date allocated: hot path).
  if (D > (M === 2 && isLeap(Y) ? 29 : DAYS_IN_MONTH[M - 1])) return null;
  const ms = Date.UTC(Y, M - 1, D, H, MI, S) + (fraction ? Math.floor(Number('0' + fraction) * 1000) : 0);
  return ms - offsetMin * 60_000;
}

export function parseRecordedAt(value: unknown, nowMs: number): TimeResult {
  let ms: number | null;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, reason: 'is not a finite number' };
    ms = Math.abs(value) < EPOCH_MS_THRESHOLD ? value * 1000 : value;
    ms = Math.round(ms);
  } else if (typeof value === 'string') {
    let m = PLAIN.exec(value);
    if (m) {
      ms = fromParts(m[1], m[2], m[3], m[4], m[5], m[6], undefined, 0);
    } else if ((m = ISO.exec(value))) {
      const off = m[8];
      let offsetMin = 0;
      if (off !== 'Z' && off !== 'z') {
        const digits = off.replace(':', '');
        const hours = Number(digits.slice(1, 3));
        const minutes = Number(digits.slice(3, 5));
        // Real offsets run from -12:00 to +14:00; anything else is a typo, not a time.
        if (hours > 14 || minutes > 59) return { ok: false, reason: `has an impossible UTC offset ${off}` };
        offsetMin = (digits[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
      }
      ms = fromParts(m[1], m[2], m[3], m[4], m[5], m[6], m[7], offsetMin);
    } else {
      return { ok: false, reason: `has an unknown format: ${JSON.stringify(value.slice(0, 40))}` };
    }
    if (ms === null) return { ok: false, reason: `is not a real date and time: ${JSON.stringify(value.slice(0, 40))}` };
  } else {
    return { ok: false, reason: 'must be a string or a number' };
  }
  if (ms < MIN_RECORDED_AT_MS) return { ok: false, reason: 'is before 2000-01-01' };
  if (ms > nowMs + MAX_FUTURE_MS) return { ok: false, reason: 'is more than one day in the future' };
  return { ok: true, ms };
}
