import { signWebhookBody } from "@hb/webhook-signature";
import { USER_AGENT } from "./attempt.ts";

export interface DeliveryMessage {
  body: string;
  headers: Record<string, string>;
}

/**
 * The body and headers of one attempt: the envelope stamped with this attempt's time (equal to
 * X-Webhook-Timestamp), signed over the exact body. The delivery pass and the event stream both
 * build what they send here, so a forwarded event is byte for byte what the endpoint would get.
 */
export function deliveryMessage(
  d: { id: string; event: string; data: unknown },
  signingSecret: string,
  at = new Date(),
): DeliveryMessage {
  const timestamp = at.toISOString();
  const body = JSON.stringify({ event: d.event, timestamp, data: d.data });
  return {
    body,
    headers: {
      "Content-Type": "application/json",
      "User-Agent": USER_AGENT,
      "X-Webhook-Event": d.event,
      "X-Webhook-Id": d.id,
      "X-Webhook-Timestamp": timestamp,
      "X-Webhook-Signature": signWebhookBody(body, signingSecret),
    },
  };
}
