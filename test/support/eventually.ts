/**
 * The one way tests wait: poll an observable condition until it holds or a deadline passes. It has
 * no dependencies (no stack, no environment), so unit tests beside the code use it too.
 */
/** Polls until fn returns a truthy value or the time is up. */
export async function eventually<T>(
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  stepMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ""}`);
}

/** Polls until `url` answers 2xx (a service's health or readiness) or the time is up. */
export const untilAnswersOk = (url: string, timeoutMs: number, stepMs = 100) =>
  eventually(
    () =>
      fetch(url).then(
        (r) => r.ok,
        () => false,
      ),
    timeoutMs,
    stepMs,
  );
