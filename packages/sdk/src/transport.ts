import { HbError } from "./errors.ts";
import { moneyOperationOf, reReadOf } from "./money.ts";
import { isRetryableStatus, type RetryPolicy, retryDelayMs, sleep } from "./retry.ts";

/** Why a call is sent again: reported to `onRetry`. */
export interface RetryEvent {
  method: string;
  path: string;
  /** The attempt about to be made, from 2. */
  attempt: number;
  delayMs: number;
  /** The status that caused it, or 0 for a lost connection. */
  status: number;
  /**
   * "retry": an ordinary call sent again; "resend": a money-moving call whose re-read showed
   * nothing applied; "replay": one whose re-read showed it took effect, repeated with the same
   * Idempotency-Key only to collect the first answer (the API moves nothing on a repeat).
   */
  kind: "retry" | "resend" | "replay";
}

export interface TransportOptions {
  baseUrl: string;
  fetch: (input: Request) => Promise<Response>;
  retry: RetryPolicy;
  idempotencyKey: () => string;
  onRetry?: (e: RetryEvent) => void;
  random?: () => number;
}

type Attempt = { response: Response; error?: undefined } | { response?: undefined; error: unknown };

/**
 * The fetch under every SDK call. It gives each money-moving call an Idempotency-Key (unless the
 * caller set one) that all its retries reuse, retries 5xx, 429 and lost connections following
 * the spec's guidance, and never resends a money-moving call before re-reading what it would have
 * changed.
 */
export function createTransport(opts: TransportOptions): (request: Request) => Promise<Response> {
  const basePath = new URL(opts.baseUrl).pathname.replace(/\/+$/, "");

  const once = async (request: Request): Promise<Attempt> => {
    try {
      return { response: await opts.fetch(request.clone()) };
    } catch (error) {
      if (request.signal.aborted) throw error;
      return { error };
    }
  };

  // One plain GET for a re-read: no retries of its own, its answer's data or undefined.
  const reRead = async (request: Request, path: string): Promise<unknown> => {
    try {
      const res = await opts.fetch(
        new Request(`${opts.baseUrl}${path}`, {
          // The key and agent only: the call's body headers and Idempotency-Key are not the read's.
          headers: {
            authorization: request.headers.get("authorization") ?? "",
            "user-agent": request.headers.get("user-agent") ?? "",
          },
          signal: request.signal,
        }),
      );
      if (!res.ok) return undefined;
      return ((await res.json()) as { data?: unknown }).data;
    } catch {
      return undefined;
    }
  };

  return async (request) => {
    const url = new URL(request.url);
    const path = url.pathname.startsWith(basePath) ? url.pathname.slice(basePath.length) : url.pathname;
    const money = moneyOperationOf(request.method, path);
    const check = money && reReadOf(money.op, money.id);
    if (money && !request.headers.has("idempotency-key")) {
      request.headers.set("idempotency-key", opts.idempotencyKey());
    }
    // What a money-moving call would change, read before it is sent, so a failure can be judged.
    const before = check ? await reRead(request, check.path) : undefined;

    for (let attempt = 1; ; attempt++) {
      const result = await once(request);
      const { response } = result;
      if (response && !isRetryableStatus(response.status)) return response;
      const giveUp = () => {
        if (response) return response;
        throw new HbError("NETWORK_ERROR", `${request.method} ${path}: no answer from the API`, {
          cause: result.error,
        });
      };
      if (attempt > opts.retry.retries) return giveUp();
      const delayMs = retryDelayMs(opts.retry, attempt - 1, response, opts.random);
      if (delayMs === undefined) return giveUp();
      let kind: RetryEvent["kind"] = "retry";
      if (money) {
        // Never blindly: without a re-read that can tell, the failure is the caller's to judge.
        if (!check || before === undefined) return giveUp();
        await sleep(delayMs, request.signal);
        const after = await reRead(request, check.path);
        if (after === undefined) return giveUp();
        kind = check.fingerprint(after) === check.fingerprint(before) ? "resend" : "replay";
        opts.onRetry?.({
          method: request.method,
          path,
          attempt: attempt + 1,
          delayMs,
          status: response?.status ?? 0,
          kind,
        });
        continue;
      }
      opts.onRetry?.({
        method: request.method,
        path,
        attempt: attempt + 1,
        delayMs,
        status: response?.status ?? 0,
        kind,
      });
      await sleep(delayMs, request.signal);
    }
  };
}
