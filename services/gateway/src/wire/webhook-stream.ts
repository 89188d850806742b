import { z } from "zod";

/** `event: ready`: the stream is open; every event raised from here on is sent. */
export const streamReady = z.object({
  partnerId: z.uuid(),
  openStreams: z.number().int().min(1).meta({ description: "the partner's open streams, this one included" }),
  heartbeatSeconds: z.number().int().min(1),
});

/**
 * `event: delivery`: one webhook event exactly as its delivery carries it. POST `body` unchanged
 * with `headers` to a receiver and it verifies as a real delivery.
 */
export const streamDelivery = z.object({
  id: z.uuid().meta({ description: "X-Webhook-Id, the same as the real delivery's" }),
  event: z.string(),
  headers: z.record(z.string(), z.string()).meta({
    description:
      "Content-Type, User-Agent, X-Webhook-Id, X-Webhook-Event, X-Webhook-Timestamp, X-Webhook-Signature",
  }),
  body: z.string().meta({ description: "the exact body the signature covers" }),
});

/** `event: error`: the stream ends; reconnect. */
export const streamError = z.object({ code: z.string(), error: z.string() });
