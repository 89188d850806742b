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
export class WebhookVerificationError extends Error {
    code;
    constructor(code, message) {
        super(message);
        this.name = "WebhookVerificationError";
        this.code = code;
    }
}
/** The X-Webhook-Signature value of a delivery body. */
export function signWebhookBody(body, secret) {
    return SIGNATURE_PREFIX + createHmac("sha256", secret).update(body).digest("hex");
}
/**
 * Verifies a delivery and returns its envelope; throws WebhookVerificationError otherwise.
 * The signature is compared in constant time before anything in the body is trusted.
 */
export function verifyWebhook(opts) {
    const id = required(opts.headers, "x-webhook-id");
    const event = required(opts.headers, "x-webhook-event");
    const timestamp = required(opts.headers, "x-webhook-timestamp");
    const signature = required(opts.headers, "x-webhook-signature");
    if (!opts.secret)
        throw new TypeError("verifyWebhook needs the signing secret");
    if (!sameText(signWebhookBody(opts.body, opts.secret), signature)) {
        throw new WebhookVerificationError("bad_signature", "X-Webhook-Signature does not match the body");
    }
    let payload;
    try {
        payload = JSON.parse(typeof opts.body === "string" ? opts.body : new TextDecoder().decode(opts.body));
    }
    catch {
        throw new WebhookVerificationError("invalid_payload", "The body is not JSON");
    }
    if (typeof payload !== "object" || payload === null || typeof payload.event !== "string") {
        throw new WebhookVerificationError("invalid_payload", "The body is not a webhook envelope");
    }
    // The headers are not signed, the body is: they must agree, and the body's time is the one judged.
    if (payload.event !== event || payload.timestamp !== timestamp) {
        throw new WebhookVerificationError("invalid_payload", "X-Webhook-Event or X-Webhook-Timestamp differs from the signed body");
    }
    const at = Date.parse(timestamp);
    const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    const now = (opts.now ?? new Date()).getTime();
    if (Number.isNaN(at) || Math.abs(now - at) > tolerance * 1000) {
        throw new WebhookVerificationError("stale_timestamp", `X-Webhook-Timestamp is more than ${tolerance} s from now`);
    }
    return { id, event, timestamp, data: payload.data };
}
/** The headers that sign a reseller API request: `<timestamp>.<raw body>`, keyed on the secret. */
export function signResellerRequest(opts) {
    if (!opts.secret)
        throw new TypeError("signResellerRequest needs the signing secret");
    const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
    return {
        "X-Reseller-Timestamp": timestamp,
        "X-Reseller-Signature": resellerSignature(opts.body ?? "", opts.secret, timestamp),
    };
}
/** The X-Reseller-Signature value for a timestamp and body. */
export function resellerSignature(body, secret, timestamp) {
    return SIGNATURE_PREFIX + createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}
/**
 * The platform's side of a reseller request: whether the signature matches, in constant time.
 * The caller judges the timestamp's distance from now (it names the problem in its answer).
 */
export function resellerSignatureMatches(body, secret, timestamp, signature) {
    return !!secret && !!signature && sameText(resellerSignature(body, secret, timestamp), signature);
}
function sameText(expected, presented) {
    const a = Buffer.from(expected);
    const b = Buffer.from(presented);
    return a.length === b.length && timingSafeEqual(a, b);
}
function header(headers, name) {
    if (typeof headers.get === "function")
        return headers.get(name) ?? undefined;
    const record = headers;
    let value = record[name];
    if (value === undefined) {
        const key = Object.keys(record).find((k) => k.toLowerCase() === name);
        value = key === undefined ? undefined : record[key];
    }
    return typeof value === "string" ? value : value?.[0];
}
function required(headers, name) {
    const value = header(headers, name);
    if (!value) {
        throw new WebhookVerificationError("missing_header", `Missing ${canonical(name)} header`);
    }
    return value;
}
const canonical = (name) => name.replace(/(^|-)([a-z])/g, (_, dash, c) => dash + c.toUpperCase());
