/**
 * The card provider's webhook (PaymentEventService): the event's signature checked, then what it
 * changes applied once (top-ups.ts) and noted for staff (card-review.ts).
 */
import { apiError, badRequest } from "@hb/platform";
import { noteOutcome } from "./card-review.ts";
import type { PaymentHandlers, PaymentsDeps } from "./deps.ts";
import { BadSignature, type CardProvider } from "./provider.ts";
import { applyProviderEvent } from "./top-ups.ts";

export function providerEvents(d: PaymentsDeps): PaymentHandlers {
  const { sql } = d;
  return {
    async handleStripeEvent(req) {
      if (!d.card) throw apiError("NOT_FOUND", "Card payments are not configured");
      let event: ReturnType<CardProvider["readEvent"]>;
      try {
        event = d.card.readEvent(req.payload, req.signature);
      } catch (err) {
        if (err instanceof BadSignature) {
          throw badRequest("signature", "The Stripe-Signature header does not match the payload");
        }
        throw err;
      }
      const outcome = await applyProviderEvent(sql, d.card.name, event);
      if (outcome) noteOutcome(d.log, d.card.name, event, outcome);
      return { acted: outcome !== undefined };
    },
  };
}
