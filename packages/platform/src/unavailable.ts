/**
 * Whether an error means a dependency (PostgreSQL, Redis, NATS) cannot be reached right now, as
 * opposed to a bug. Such failures are answered 503 SERVICE_UNAVAILABLE, which tells a client to
 * retry later; a 500 would say the request itself broke something.
 */

// Socket-level failures, whichever client saw them.
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

// postgres.js's own connection codes.
const POSTGRES_CLIENT_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

// SQLSTATE classes and codes that mean the server is going away or refusing connections:
// 08 connection exception, 57P01-57P03 shutdown / cannot connect now, 53300 too many connections.
const isUnavailableSqlState = (code: string) =>
  code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(code);

// ioredis: its connection is down and the command gave up retrying.
const REDIS_MESSAGES = [
  /^Connection is closed\.?$/,
  /^Stream isn't writeable/,
  /Reached the max retries per request/,
];

function one(err: object): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  if (NETWORK_CODES.has(code) || POSTGRES_CLIENT_CODES.has(code)) return true;
  if (/^[0-9A-Z]{5}$/.test(code) && isUnavailableSqlState(code)) return true;
  if (e.name === "MaxRetriesPerRequestError") return true;
  const message = typeof e.message === "string" ? e.message : "";
  if (REDIS_MESSAGES.some((p) => p.test(message))) return true;
  // nats.js: the connection is closed, draining or lost, or JetStream has no responders.
  return ["ClosedConnectionError", "DrainingConnectionError", "ConnectionError", "NoResponders"].includes(
    String(e.name),
  );
}

export function isDependencyUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = err;
  // Follow `cause` and AggregateError members: drivers wrap the socket error they saw.
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    if (one(current)) return true;
    if (current instanceof AggregateError && current.errors.some((e) => isDependencyUnavailable(e)))
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
