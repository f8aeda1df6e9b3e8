// Waiting in tests: on a condition, never for a guessed time.

/**
 * Polls `cond` every `stepMs` until it returns something truthy, and returns that. Fails
 * after `timeoutMs` with a message naming `what` was awaited and the last value seen.
 * An exception thrown by `cond` fails the wait at once (it is not a "not yet").
 */
export async function waitFor<T>(cond: () => T | Promise<T>, timeoutMs: number, what: string, stepMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await cond();
    if (last) return last as NonNullable<T>;
    if (Date.now() >= deadline) {
      const seen = last === undefined || last === null || last === false ? '' : ` (last: ${String(last)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${seen}`);
    }
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * Lets time pass. Only for a test whose point is that something does NOT happen within
 * that time (a queued transaction is not included, an unsubscribed stream stays silent):
 * say so where it is used. Everything else waits with `waitFor`.
 */
export const quietPeriod = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
