import { retryAfterSeconds } from "./errors.ts";

export interface RetryPolicy {
  /** Further attempts after the first (default 3). */
  retries: number;
  /** First back-off delay for a 5xx or a lost connection; doubled each time, with jitter (default 500 ms). */
  baseDelayMs: number;
  /** Longest wait the client accepts, back-off or Retry-After; a longer Retry-After is handed back (default 30 s). */
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { retries: 3, baseDelayMs: 500, maxDelayMs: 30_000 };

/** The spec's retry guidance: 5xx and 429 may be retried. */
export const isRetryableStatus = (status: number) => status === 429 || status >= 500;

/**
 * How long to wait before attempt `attempt + 1` (attempt counts from 0), or undefined when the
 * wait would exceed the policy (then the answer is handed back as it is). A 429 waits what its
 * Retry-After says; a 5xx or a lost connection backs off exponentially with full jitter.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  response: Response | undefined,
  random: () => number = Math.random,
): number | undefined {
  const after = response ? retryAfterSeconds(response.headers.get("retry-after")) : undefined;
  if (after !== undefined) {
    const ms = after * 1000;
    return ms <= policy.maxDelayMs ? ms : undefined;
  }
  // A 429 without Retry-After gives no hint how long the window lasts: do not guess.
  if (response?.status === 429) return undefined;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** setTimeout as a promise that an AbortSignal cuts short. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
