/**
 * Waiting for an event rather than for a delay: a test that waits a fixed
 * time races the machine (a busy one misses it), one that waits for what it
 * needs does not. The limit stops a hang; it never measures speed.
 */

/** A bound on a hang: tens of seconds, far past any wait a working machine makes, however busy. */
export const HANG_MS = 30_000;

/**
 * Resolves once `ready()` holds, looking every `everyMs`.
 * @throws Error naming `what` when it still does not hold after `limitMs`
 */
export async function until(ready: () => boolean | Promise<boolean>, what: string, limitMs = HANG_MS, everyMs = 20): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`still waiting, after ${limitMs} ms, for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
