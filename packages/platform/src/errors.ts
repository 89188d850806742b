import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type ErrorInfo, ErrorInfoSchema } from "@hb/contracts/hb/platform/v1/error_pb";
import { connectError, connectErrorFrom } from "./connect-error.ts";
import { isDependencyUnavailable } from "./unavailable.ts";

/**
 * The one table of the error model: the spec's machine code, the HTTP status the gateway answers
 * with, and the Connect (= gRPC) code it travels as between services.
 */
export const errorCodes = {
  BAD_REQUEST: { http: 400, rpc: Code.InvalidArgument },
  UNAUTHORIZED: { http: 401, rpc: Code.Unauthenticated },
  SCOPE_REQUIRED: { http: 403, rpc: Code.PermissionDenied },
  FORBIDDEN: { http: 403, rpc: Code.PermissionDenied },
  ACCOUNT_SUSPENDED: { http: 403, rpc: Code.PermissionDenied },
  ACTION_NOT_ALLOWED: { http: 403, rpc: Code.PermissionDenied },
  FEATURE_DISABLED: { http: 403, rpc: Code.PermissionDenied },
  NOT_FOUND: { http: 404, rpc: Code.NotFound },
  METHOD_NOT_ALLOWED: { http: 405, rpc: Code.Unimplemented },
  CONFLICT: { http: 409, rpc: Code.FailedPrecondition },
  PAYLOAD_TOO_LARGE: { http: 413, rpc: Code.InvalidArgument },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, rpc: Code.InvalidArgument },
  PROVIDER_ERROR: { http: 424, rpc: Code.Aborted },
  RATE_LIMITED: { http: 429, rpc: Code.ResourceExhausted },
  ACTION_RATE_LIMITED: { http: 429, rpc: Code.ResourceExhausted },
  INTERNAL_ERROR: { http: 500, rpc: Code.Internal },
  BAD_GATEWAY: { http: 502, rpc: Code.Unknown },
  SERVICE_UNAVAILABLE: { http: 503, rpc: Code.Unavailable },
} as const;

export type ErrorCode = keyof typeof errorCodes;

/** What a bare transport code means when no ErrorInfo came with it. */
const fallbackByRpcCode: Partial<Record<Code, ErrorCode>> = {
  [Code.InvalidArgument]: "BAD_REQUEST",
  [Code.Unauthenticated]: "UNAUTHORIZED",
  [Code.PermissionDenied]: "FORBIDDEN",
  [Code.NotFound]: "NOT_FOUND",
  [Code.FailedPrecondition]: "CONFLICT",
  [Code.AlreadyExists]: "CONFLICT",
  [Code.ResourceExhausted]: "RATE_LIMITED",
  [Code.Unavailable]: "SERVICE_UNAVAILABLE",
  [Code.DeadlineExceeded]: "SERVICE_UNAVAILABLE",
};

/** Deliberately generic: 5xx messages never carry internal detail to the caller. */
const genericMessages: Record<number, string> = {
  500: "Internal error. The failure was logged; please try again later.",
  502: "A platform service answered unexpectedly. Please try again later.",
  503: "The service is temporarily unavailable. Please try again later.",
};

export interface FieldViolation {
  field: string;
  message: string;
}

export interface ApiErrorOptions {
  violations?: FieldViolation[];
  scope?: string;
  retryAfterSeconds?: number;
  cause?: unknown;
}

/** Throw from any handler: carries the spec's code across the wire. */
export function apiError(code: ErrorCode, message: string, opts: ApiErrorOptions = {}): ConnectError {
  const info = create(ErrorInfoSchema, {
    code,
    violations: opts.violations ?? [],
    scope: opts.scope ?? "",
    retryAfterSeconds: opts.retryAfterSeconds ?? 0,
  });
  return connectError(message, errorCodes[code].rpc, [{ desc: ErrorInfoSchema, value: info }], opts.cause);
}

export const badRequest = (field: string, message: string) =>
  apiError("BAD_REQUEST", message, { violations: [{ field, message }] });
export const notFound = (what = "Resource") => apiError("NOT_FOUND", `${what} not found`);

export interface ResolvedError {
  code: ErrorCode;
  status: number;
  message: string;
  info?: ErrorInfo;
}

/** Turns anything thrown (ConnectError from a backend, or a bug) into the spec's terms. */
export function resolveError(err: unknown): ResolvedError {
  if (!(err instanceof ConnectError) && isDependencyUnavailable(err)) {
    return { code: "SERVICE_UNAVAILABLE", status: 503, message: genericMessages[503] };
  }
  const ce = connectErrorFrom(err);
  const info = ce.findDetails(ErrorInfoSchema)[0];
  const code: ErrorCode =
    info && info.code in errorCodes
      ? (info.code as ErrorCode)
      : (fallbackByRpcCode[ce.code] ?? "INTERNAL_ERROR");
  const status = errorCodes[code].http;
  const message = status >= 500 ? genericMessages[status] : ce.rawMessage;
  return { code, status, message, info };
}
