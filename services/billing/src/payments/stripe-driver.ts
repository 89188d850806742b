import { createRequire } from "node:module";
import type Stripe from "stripe";
import type { Units } from "../money.ts";
import { fromMinor, toMinor } from "./minor-units.ts";
import {
  BadSignature,
  type CardProvider,
  type CheckoutRequest,
  type DisputeFacts,
  type ProviderEvent,
} from "./provider.ts";

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** Another API host (tests' stand-in), e.g. http://127.0.0.1:12111; unset: Stripe's own. */
  apiBase?: string;
  timeoutMs: number;
}

/**
 * The stripe package, loaded at the first card operation rather than at start: loading it (its
 * CommonJS build, which leaves fetch's undici unloaded too) took about 20 MB of resident memory,
 * and billing idled above its 120 MB budget with it (docs/benchmarks.md, issue 31 §5, second pass).
 */
let stripePackage: typeof Stripe | undefined;
const stripeLib = (): typeof Stripe => {
  stripePackage ??= createRequire(import.meta.url)("stripe") as typeof Stripe;
  return stripePackage;
};

/**
 * The card provider on Stripe's official package: Checkout Sessions in payment mode, one line of
 * "Account credit", and the webhook read by `stripe.webhooks.constructEvent` over the raw bytes.
 */
export function stripeProvider(s: StripeSettings): CardProvider {
  const base = s.apiBase ? new URL(s.apiBase) : undefined;
  let client: Stripe | undefined;
  const stripe = () => {
    client ??= makeClient();
    return client;
  };
  const makeClient = () =>
    new (stripeLib())(s.secretKey, {
      ...(base
        ? {
            host: base.hostname,
            port: base.port || (base.protocol === "http:" ? 80 : 443),
            protocol: base.protocol === "http:" ? "http" : "https",
          }
        : {}),
      timeout: s.timeoutMs,
      // A network failure is retried by the package with the same idempotency key.
      maxNetworkRetries: 2,
      telemetry: false,
    });

  return {
    name: "stripe",

    async startCheckout(t: CheckoutRequest) {
      const minor = toMinor(t.amount, t.currency);
      if (minor === undefined) throw new Error(`no card amount for ${t.currency}`);
      const metadata = { top_up_id: t.topUpId };
      const session = await stripe().checkout.sessions.create(
        {
          mode: "payment",
          client_reference_id: t.topUpId,
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: t.currency.toLowerCase(),
                unit_amount: minor,
                product_data: { name: t.description },
              },
            },
          ],
          success_url: t.successUrl,
          cancel_url: t.cancelUrl,
          metadata,
          payment_intent_data: { metadata },
        },
        // The top-up's id: a retried create (ours or the package's) opens no second session.
        { idempotencyKey: `top-up-${t.topUpId}` },
      );
      if (!session.url) throw new Error("Stripe returned a Checkout Session without a URL");
      return { sessionId: session.id, url: session.url };
    },

    async expireCheckout(sessionId: string) {
      try {
        const s = await stripe().checkout.sessions.expire(sessionId);
        return s.status === "expired";
      } catch (err) {
        // Stripe refuses to expire a session that is complete (paid) or already expired.
        if (err instanceof stripeLib().errors.StripeInvalidRequestError) return false;
        throw err;
      }
    },

    readEvent(payload: Uint8Array, signature: string): ProviderEvent {
      let event: Stripe.Event;
      try {
        event = stripe().webhooks.constructEvent(Buffer.from(payload), signature, s.webhookSecret);
      } catch (err) {
        if (err instanceof stripeLib().errors.StripeSignatureVerificationError)
          throw new BadSignature(err.message);
        // A correctly signed body that is not JSON is no event we can read either.
        throw new BadSignature("the payload is not a Stripe event");
      }
      return readStripeEvent(event);
    },
  };
}

const idOf = (v: string | { id: string } | null | undefined): string | undefined =>
  typeof v === "string" ? v : (v?.id ?? undefined);

/** The event reduced to what moves money; every other type is ignored. */
function readStripeEvent(event: Stripe.Event): ProviderEvent {
  const base = { id: event.id, type: event.type };
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded": {
      const o = event.data.object;
      // A delayed payment method completes the session unpaid; its money comes with
      // async_payment_succeeded or payment_intent.succeeded.
      if (o.payment_status !== "paid" || o.amount_total === null || !o.currency)
        return { ...base, kind: "ignored" };
      const amount = minorAmount(o.amount_total, o.currency);
      if (amount === undefined) return { ...base, kind: "ignored" };
      return {
        ...base,
        kind: "paid",
        payment: {
          topUpId: o.metadata?.top_up_id ?? o.client_reference_id ?? undefined,
          sessionId: o.id,
          paymentId: idOf(o.payment_intent),
          amount,
          currency: o.currency.toUpperCase(),
        },
      };
    }
    case "payment_intent.succeeded": {
      const o = event.data.object;
      const amount = minorAmount(o.amount_received, o.currency);
      if (amount === undefined) return { ...base, kind: "ignored" };
      return {
        ...base,
        kind: "paid",
        payment: {
          topUpId: o.metadata?.top_up_id,
          sessionId: undefined,
          paymentId: o.id,
          amount,
          currency: o.currency.toUpperCase(),
        },
      };
    }
    case "charge.refunded": {
      const o = event.data.object;
      const paymentId = idOf(o.payment_intent);
      const refunded = minorAmount(o.amount_refunded, o.currency);
      if (!paymentId || refunded === undefined) return { ...base, kind: "ignored" };
      // A charge made by a PaymentIntent carries the intent's metadata, our top-up's id among it: a
      // refund reported before the payment event still finds its top-up.
      const topUpId = o.metadata?.top_up_id;
      return { ...base, kind: "refunded", paymentId, topUpId, refunded, currency: o.currency.toUpperCase() };
    }
    case "charge.dispute.created":
    case "charge.dispute.updated":
    case "charge.dispute.funds_withdrawn":
    case "charge.dispute.funds_reinstated":
    case "charge.dispute.closed": {
      const o = event.data.object;
      const paymentId = idOf(o.payment_intent);
      const amount = minorAmount(o.amount, o.currency);
      if (!paymentId || amount === undefined) return { ...base, kind: "ignored" };
      return {
        ...base,
        kind: "dispute",
        paymentId,
        dispute: {
          id: o.id,
          step: DISPUTE_STEP[event.type],
          status: o.status,
          amount,
          currency: o.currency.toUpperCase(),
        },
      };
    }
    default:
      return { ...base, kind: "ignored" };
  }
}

const DISPUTE_STEP = {
  "charge.dispute.created": "opened",
  "charge.dispute.updated": "updated",
  "charge.dispute.funds_withdrawn": "withdrawn",
  "charge.dispute.funds_reinstated": "reinstated",
  "charge.dispute.closed": "closed",
} as const satisfies Record<string, DisputeFacts["step"]>;

const minorAmount = (minor: number, currency: string): Units | undefined =>
  fromMinor(minor, currency.toUpperCase());
