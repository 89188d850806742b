export declare const SIGNATURE_PREFIX = "hmac-sha256=";
/** How far a delivery's time may be from the receiver's clock, by default. */
export declare const DEFAULT_TOLERANCE_SECONDS = 300;
export type RawBody = string | Uint8Array;
/** Node's `req.headers`, a Fetch `Headers`, or a plain record with any letter case. */
export type HeaderSource = {
    get(name: string): string | null;
} | Readonly<Record<string, string | readonly string[] | undefined>>;
export type WebhookVerificationCode = 
/** A required X-Webhook-* header is absent or empty. */
"missing_header"
/** The signature does not match the body with this secret (tampered, re-serialised, other secret). */
 | "bad_signature"
/** The signed time is further than the tolerance from now: an old delivery replayed, or a clock off. */
 | "stale_timestamp"
/** Signed, but not a webhook envelope, or its event or time disagree with the headers. */
 | "invalid_payload";
export declare class WebhookVerificationError extends Error {
    readonly code: WebhookVerificationCode;
    constructor(code: WebhookVerificationCode, message: string);
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
export declare function signWebhookBody(body: RawBody, secret: string): string;
/**
 * Verifies a delivery and returns its envelope; throws WebhookVerificationError otherwise.
 * The signature is compared in constant time before anything in the body is trusted.
 */
export declare function verifyWebhook<D = Record<string, unknown>>(opts: VerifyWebhookOptions): VerifiedWebhook<D>;
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
export declare function signResellerRequest(opts: SignResellerRequestOptions): ResellerRequestHeaders;
/** The X-Reseller-Signature value for a timestamp and body. */
export declare function resellerSignature(body: RawBody, secret: string, timestamp: string): string;
/**
 * The platform's side of a reseller request: whether the signature matches, in constant time.
 * The caller judges the timestamp's distance from now (it names the problem in its answer).
 */
export declare function resellerSignatureMatches(body: RawBody, secret: string, timestamp: string, signature: string): boolean;
