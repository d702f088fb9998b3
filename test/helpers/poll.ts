/**
 * Waiting in tests without long sleeps: poll every 50 ms, give up after a generous timeout with a
 * message naming what was awaited.
 */

const INTERVAL_MS = 50;

/** Poll `probe` until it returns a value other than undefined; that value (or time out). */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, INTERVAL_MS));
  }
}

/** Poll `check` until it is true (or time out). */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  await until(what, async () => ((await check()) ? true : undefined), timeoutMs);
}
