import { type ErrorCode, errorCodes, type FieldViolation } from "@hb/platform";
import type { Response } from "express";
import { rateRefusals } from "./metrics.ts";

/** The one envelope writer. Success: {success: true, data, ...extra}. */
export function sendOk(
  res: Response,
  status: number,
  data: unknown,
  extra: Record<string, unknown> = {},
): void {
  res.status(status).json({ success: true, data, ...extra });
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
