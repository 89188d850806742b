import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Signatures of the reseller programme. A webhook delivery is signed over the exact raw body;
 * a partner's own reseller request is signed over "<timestamp>.<raw body>". Both are
 * `hmac-sha256=<hex>` with the partner's signing secret, compared in constant time.
 */
export const SIGNATURE_PREFIX = "hmac-sha256=";

export function signBody(secret: string, rawBody: Uint8Array | string): string {
  return SIGNATURE_PREFIX + createHmac("sha256", secret).update(rawBody).digest("hex");
}

function matches(expected: string, presented: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Verifies X-Webhook-Signature of a delivery: read the raw body before parsing it. */
export function verifyWebhookSignature(
  secret: string,
  rawBody: Uint8Array | string,
  header: string | undefined,
): boolean {
  return !!header && matches(signBody(secret, rawBody), header);
}

export function signRequest(secret: string, timestamp: string, rawBody: Uint8Array | string): string {
  return (
    SIGNATURE_PREFIX + createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex")
  );
}

export function verifySignedRequest(
  secret: string,
  timestamp: string,
  rawBody: Uint8Array | string,
  header: string,
): boolean {
  return !!header && matches(signRequest(secret, timestamp, rawBody), header);
}
