/**
 * Signatures of the reseller programme, for partners and for the platform alike.
 *
 * - A webhook delivery carries `X-Webhook-Signature: hmac-sha256=<hex>`, the HMAC-SHA256 of the
 *   exact raw body keyed on the partner's signing secret. The body's `timestamp` equals the
 *   `X-Webhook-Timestamp` header, so the time checked for staleness is one the signature covers.
 * - A partner's own reseller request carries `X-Reseller-Timestamp` (Unix seconds) and
 *   `X-Reseller-Signature: hmac-sha256=<hex>` over `<timestamp>.<raw body>`.
 *
 * No dependencies: node:crypto only. Copy this file or the package as it is.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_PREFIX = "hmac-sha256=";
/** How far a delivery's time may be from the receiver's clock, by default. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type RawBody = string | Uint8Array;

/** Node's `req.headers`, a Fetch `Headers`, or a plain record with any letter case. */
export type HeaderSource =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

export type WebhookVerificationCode =
  /** A required X-Webhook-* header is absent or empty. */
  | "missing_header"
  /** The signature does not match the body with this secret (tampered, re-serialised, other secret). */
  | "bad_signature"
  /** The signed time is further than the tolerance from now: an old delivery replayed, or a clock off. */
  | "stale_timestamp"
  /** Signed, but not a webhook envelope, or its event or time disagree with the headers. */
  | "invalid_payload";

export class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationCode;
  constructor(code: WebhookVerificationCode, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.code = code;
  }
}

/** The envelope every delivery carries. */
export interface WebhookPayload<D = Record<string, unknown>> {
  event: string;
  /** ISO 8601 time of this attempt. */
  timestamp: string;
  data: D;
}

export interface VerifiedWebhook<D = Record<string, unknown>> {
  /** X-Webhook-Id: stable across retries, deduplicate on it. */
  id: string;
  event: string;
  timestamp: string;
  data: D;
}

export interface VerifyWebhookOptions {
  /** The raw body exactly as received, before any JSON parsing. */
  body: RawBody;
  headers: HeaderSource;
  /** The partner's signing secret. */
  secret: string;
  /** Default 300. */
  toleranceSeconds?: number;
  /** The receiver's time; defaults to now (tests pass a fixed one). */
  now?: Date;
}

/** The X-Webhook-Signature value of a delivery body. */
export function signWebhookBody(body: RawBody, secret: string): string {
  return SIGNATURE_PREFIX + createHmac("sha256", secret).update(body).digest("hex");
}

/**
 * Verifies a delivery and returns its envelope; throws WebhookVerificationError otherwise.
 * The signature is compared in constant time before anything in the body is trusted.
 */
export function verifyWebhook<D = Record<string, unknown>>(opts: VerifyWebhookOptions): VerifiedWebhook<D> {
  const id = required(opts.headers, "x-webhook-id");
  const event = required(opts.headers, "x-webhook-event");
  const timestamp = required(opts.headers, "x-webhook-timestamp");
  const signature = required(opts.headers, "x-webhook-signature");
  if (!opts.secret) throw new TypeError("verifyWebhook needs the signing secret");
  if (!sameText(signWebhookBody(opts.body, opts.secret), signature)) {
    throw new WebhookVerificationError("bad_signature", "X-Webhook-Signature does not match the body");
  }
  let payload: WebhookPayload<D>;
  try {
    payload = JSON.parse(typeof opts.body === "string" ? opts.body : new TextDecoder().decode(opts.body));
  } catch {
    throw new WebhookVerificationError("invalid_payload", "The body is not JSON");
  }
  if (typeof payload !== "object" || payload === null || typeof payload.event !== "string") {
    throw new WebhookVerificationError("invalid_payload", "The body is not a webhook envelope");
  }
  // The headers are not signed, the body is: they must agree, and the body's time is the one judged.
  if (payload.event !== event || payload.timestamp !== timestamp) {
    throw new WebhookVerificationError(
      "invalid_payload",
      "X-Webhook-Event or X-Webhook-Timestamp differs from the signed body",
    );
  }
  const at = Date.parse(timestamp);
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = (opts.now ?? new Date()).getTime();
  if (Number.isNaN(at) || Math.abs(now - at) > tolerance * 1000) {
    throw new WebhookVerificationError(
      "stale_timestamp",
      `X-Webhook-Timestamp is more than ${tolerance} s from now`,
    );
  }
  return { id, event, timestamp, data: payload.data };
}

export interface SignResellerRequestOptions {
  /** The exact bytes you will send; omit (or "") for a request without a body. */
  body?: RawBody;
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number | string;
}

export interface ResellerRequestHeaders {
  "X-Reseller-Timestamp": string;
  "X-Reseller-Signature": string;
  [name: string]: string;
}

/** The headers that sign a reseller API request: `<timestamp>.<raw body>`, keyed on the secret. */
export function signResellerRequest(opts: SignResellerRequestOptions): ResellerRequestHeaders {
  if (!opts.secret) throw new TypeError("signResellerRequest needs the signing secret");
  const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  return {
    "X-Reseller-Timestamp": timestamp,
    "X-Reseller-Signature": resellerSignature(opts.body ?? "", opts.secret, timestamp),
  };
}

/** The X-Reseller-Signature value for a timestamp and body. */
export function resellerSignature(body: RawBody, secret: string, timestamp: string): string {
  return SIGNATURE_PREFIX + createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

/**
 * The platform's side of a reseller request: whether the signature matches, in constant time.
 * The caller judges the timestamp's distance from now (it names the problem in its answer).
 */
export function resellerSignatureMatches(
  body: RawBody,
  secret: string,
  timestamp: string,
  signature: string,
): boolean {
  return !!secret && !!signature && sameText(resellerSignature(body, secret, timestamp), signature);
}

function sameText(expected: string, presented: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof headers.get === "function") return headers.get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[name];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  return typeof value === "string" ? value : value?.[0];
}

function required(headers: HeaderSource, name: string): string {
  const value = header(headers, name);
  if (!value) {
    throw new WebhookVerificationError("missing_header", `Missing ${canonical(name)} header`);
  }
  return value;
}

const canonical = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
