import { apiErrorCodes } from "./gen/operations.ts";

/** A machine code of a refusal the API documents (branch on these, never on the message). */
export type ApiErrorCode = (typeof apiErrorCodes)[number];

/** Codes the client itself produces: no answer came back, or a wait ran out. */
export type ClientErrorCode = "NETWORK_ERROR" | "TIMEOUT";

export type ErrorCode = ApiErrorCode | ClientErrorCode;

export interface FieldError {
  field: string;
  message: string;
}

/** What each code carries beyond the common fields, so narrowing on `code` types the extras. */
interface Extras {
  BAD_REQUEST: { details: FieldError[] };
  SCOPE_REQUIRED: { scope: string };
  ACTION_RATE_LIMITED: { retryAfterSeconds: number };
  RATE_LIMITED: { retryAfterSeconds: number | undefined };
}
type ExtrasOf<C extends ErrorCode> = C extends keyof Extras ? Extras[C] : unknown;

/**
 * A refused or failed call. `code` is the API's machine code (or NETWORK_ERROR / TIMEOUT from the
 * client); `status` the HTTP status (0 when no answer came); `error` the readable message.
 */
export class HbError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly status: number;
  readonly details: FieldError[];
  readonly scope: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly requestId: string | undefined;

  constructor(
    code: C,
    message: string,
    opts: {
      status?: number;
      details?: FieldError[];
      scope?: string;
      retryAfterSeconds?: number;
      requestId?: string;
      cause?: unknown;
    } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "HbError";
    this.code = code;
    this.status = opts.status ?? 0;
    this.details = opts.details ?? [];
    this.scope = opts.scope;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.requestId = opts.requestId;
  }

  /** Narrows to one code: `if (err.is("SCOPE_REQUIRED")) err.scope` is a string. */
  is<K extends ErrorCode>(code: K): this is HbError<K> & ExtrasOf<K> {
    return (this.code as ErrorCode) === code;
  }
}

/** True when `err` is an HbError, of the given code when one is named. */
export function isHbError<K extends ErrorCode = ErrorCode>(
  err: unknown,
  code?: K,
): err is HbError<K> & ExtrasOf<K> {
  return err instanceof HbError && (code === undefined || err.code === code);
}

const known = new Set<string>(apiErrorCodes);

/** The error an API refusal stands for, read from its envelope and headers. */
export function errorFromResponse(status: number, body: unknown, headers: Headers): HbError {
  const envelope = (typeof body === "object" && body !== null ? body : {}) as {
    error?: unknown;
    code?: unknown;
    details?: unknown;
    scope?: unknown;
    retry_after_seconds?: unknown;
  };
  const retryAfter = retryAfterSeconds(headers.get("retry-after"));
  const code =
    typeof envelope.code === "string" && known.has(envelope.code)
      ? (envelope.code as ApiErrorCode)
      : fallbackCode(status);
  return new HbError(code, typeof envelope.error === "string" ? envelope.error : `HTTP ${status}`, {
    status,
    details: Array.isArray(envelope.details) ? (envelope.details as FieldError[]) : [],
    scope: typeof envelope.scope === "string" ? envelope.scope : undefined,
    retryAfterSeconds:
      typeof envelope.retry_after_seconds === "number" ? envelope.retry_after_seconds : retryAfter,
    requestId: headers.get("x-request-id") ?? undefined,
  });
}

/** An answer without the envelope (a proxy's page, say) still gets a code from its status. */
function fallbackCode(status: number): ApiErrorCode {
  if (status === 400) return "BAD_REQUEST";
  if (status === 401) return "UNAUTHORIZED";
  if (status === 403) return "FORBIDDEN";
  if (status === 404) return "NOT_FOUND";
  if (status === 409) return "CONFLICT";
  if (status === 413) return "PAYLOAD_TOO_LARGE";
  if (status === 429) return "RATE_LIMITED";
  if (status === 502) return "BAD_GATEWAY";
  if (status === 503) return "SERVICE_UNAVAILABLE";
  return "INTERNAL_ERROR";
}

/** Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110 10.2.3). */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}
