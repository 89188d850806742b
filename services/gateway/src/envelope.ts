import { type ErrorCode, errorCodes, type FieldViolation } from "@hb/platform";
import type { Response } from "express";
import { rateRefusals } from "./metrics.ts";

/**
 * A `data` already written as JSON (the machine lists write theirs straight from compute's bytes,
 * mappers/machine-page.ts): placed in the envelope as it is.
 */
export class JsonText {
  readonly text: string;
  /**
   * The last envelope written around the text, as the bytes sent, with the `extra` it was written
   * with: a held page (held-pages.ts) is the same JsonText each time it is answered, so its
   * envelope is made and encoded once, not for every request (the text's UTF-8 encoding and the
   * copies behind it were a tenth of the gateway's CPU per held page).
   */
  #envelope: { rest: string; body: Buffer } | undefined;
  constructor(text: string) {
    this.text = text;
  }

  /** The envelope's bytes, `rest` being JSON.stringify of its fields beside `data`. */
  envelope(rest: string): Buffer {
    if (this.#envelope?.rest !== rest) {
      const body = `{"success":true,"data":${this.text}${rest === "{}" ? "}" : `,${rest.slice(1)}`}`;
      this.#envelope = { rest, body: Buffer.from(body) };
    }
    return this.#envelope.body;
  }
}

/** The one envelope writer. Success: {success: true, data, ...extra}. */
export function sendOk(
  res: Response,
  status: number,
  data: unknown,
  extra: Record<string, unknown> = {},
): void {
  if (!(data instanceof JsonText)) {
    res.status(status).json({ success: true, data, ...extra });
    return;
  }
  // The bytes JSON.stringify writes for the same envelope, with the headers res.json sets.
  const body = data.envelope(JSON.stringify(extra));
  res.status(status).set("Content-Type", "application/json; charset=utf-8");
  // HEAD and a conditional request that Express answers 304 (If-None-Match: *) are its to send.
  if (res.req.method === "HEAD" || res.req.fresh) {
    res.send(body);
    return;
  }
  res.set("Content-Length", String(body.length));
  res.end(body);
}

/**
 * How long a client is asked to wait after a 503 (a dependency is down): an outage is answered at
 * once (platform/redis.ts fails Redis commands fast), so the header is what paces the retries.
 * The pages send it too (pages/index.ts).
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export interface ErrorExtras {
  details?: FieldViolation[];
  scope?: string;
  retryAfterSeconds?: number;
}

/** Refusal: {success: false, error, code, details?, scope?, retry_after_seconds?}. */
export function sendError(res: Response, code: ErrorCode, message: string, extra: ErrorExtras = {}): void {
  const status = errorCodes[code].http;
  if (code === "RATE_LIMITED" || code === "ACTION_RATE_LIMITED") rateRefusals.labels({ code }).inc();
  const body: Record<string, unknown> = { success: false, error: message, code };
  if (extra.details && extra.details.length > 0) body.details = extra.details;
  if (code === "SCOPE_REQUIRED") body.scope = extra.scope ?? "";
  // RFC 6750: a 401 says which scheme the API expects.
  if (status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="api", error="invalid_token"');
  if (status === 429 && extra.retryAfterSeconds !== undefined) {
    res.setHeader("Retry-After", String(extra.retryAfterSeconds));
    if (code === "ACTION_RATE_LIMITED") body.retry_after_seconds = extra.retryAfterSeconds;
  }
  if (status === 503)
    res.setHeader("Retry-After", String(extra.retryAfterSeconds ?? UNAVAILABLE_RETRY_AFTER_SECONDS));
  res.status(status).json(body);
}
