import { setTimeout as sleep } from 'node:timers/promises';

/** Polls check every 25 ms until it holds or deadlineMs passes; returns whether it held (checked once more at the end). */
export async function waitFor(check: () => Promise<boolean> | boolean, deadlineMs: number): Promise<boolean> {
  const started = performance.now();
  while (performance.now() - started < deadlineMs) {
    if (await check()) return true;
    await sleep(25);
  }
  return check();
}
