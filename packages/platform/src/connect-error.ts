/**
 * ConnectErrors made without touching the global `Headers`. ConnectError's constructor builds
 * `new Headers(metadata)`, and in Node `Headers` is the bundled undici, which its first use loads
 * whole: 8 MB of resident memory and 150-350 ms of CPU (docs/benchmarks.md, 2026-11-29 night), in
 * a process whose first error, received or raised, would otherwise be its only use of it. The
 * errors made here are ConnectErrors in every other way (prototype, fields, message, stack); their
 * `metadata` is made when first read, which only the Connect transport does.
 */
import { Code, ConnectError } from "@connectrpc/connect";

type Details = ConnectError["details"];

/** A code as ConnectError names it in its message: "not_found" for Code.NotFound. */
function codeName(code: Code): string {
  const name = Code[code];
  if (typeof name !== "string") return String(code);
  return name[0].toLowerCase() + name.slice(1).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `new ConnectError(message, code, undefined, details, cause)`, without loading undici. */
export function connectError(
  message: string,
  code: Code,
  details: Details = [],
  cause?: unknown,
): ConnectError {
  const err = Object.create(ConnectError.prototype) as ConnectError;
  let metadata: Headers | undefined;
  Object.defineProperties(err, {
    message: {
      value: message.length ? `[${codeName(code)}] ${message}` : `[${codeName(code)}]`,
      writable: true,
      configurable: true,
    },
    name: { value: "ConnectError", writable: true, enumerable: true, configurable: true },
    isWireError: { value: false, writable: true, enumerable: true, configurable: true },
    rawMessage: { value: message, writable: true, enumerable: true, configurable: true },
    code: { value: code, writable: true, enumerable: true, configurable: true },
    metadata: {
      get: () => {
        metadata ??= new Headers();
        return metadata;
      },
      enumerable: true,
      configurable: true,
    },
    details: { value: details, writable: true, enumerable: true, configurable: true },
    cause: { value: cause, writable: true, enumerable: true, configurable: true },
  });
  Error.captureStackTrace(err, connectError);
  return err;
}

/** `ConnectError.from(reason)`, without loading undici for a reason that is not one already. */
export function connectErrorFrom(reason: unknown, code: Code = Code.Unknown): ConnectError {
  if (reason instanceof ConnectError) return reason;
  if (reason instanceof Error) {
    // Fetch requests and AbortSignal.timeout() end with these: ConnectError.from calls them Canceled.
    if (reason.name === "AbortError" || reason.name === "TimeoutError")
      return connectError(reason.message, Code.Canceled);
    return connectError(reason.message, code, [], reason);
  }
  return connectError(String(reason), code, [], reason);
}
