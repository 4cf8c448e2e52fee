/**
 * A positive id from a URL segment, or null. Ids beyond 2^53 would round to a neighbouring id, so they name
 * nothing; so do signs, leading zeros and anything that is not plain digits.
 */
export function parseId(s: string): number | null {
  if (!/^[1-9]\d{0,15}$/.test(s)) return null;
  const id = Number(s);
  return Number.isSafeInteger(id) ? id : null;
}
