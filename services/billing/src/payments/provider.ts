import type { Units } from "../money.ts";

/**
 * A card payment provider as billing needs it: a hosted checkout for one top-up, and its webhook
 * events, verified and reduced to what moves money. A driver (stripe-driver.ts) speaks the
 * provider's API; everything about crediting once lives in top-ups.ts, whatever the provider.
 */
export interface CardProvider {
  readonly name: string;
  /** Opens a hosted checkout for the top-up; the browser is sent to `url`. */
  startCheckout(t: CheckoutRequest): Promise<{ sessionId: string; url: string }>;
  /** Closes a checkout that was not paid, so it can no longer be; false when it was paid meanwhile. */
  expireCheckout(sessionId: string): Promise<boolean>;
  /** Checks the signature over the raw body and reads the event; throws BadSignature. */
  readEvent(payload: Uint8Array, signature: string): ProviderEvent;
}

export interface CheckoutRequest {
  topUpId: string;
  amount: Units;
  currency: string;
  successUrl: string;
  cancelUrl: string;
  description: string;
}

/** What an event means for billing; `ignored` for every type billing does not act on. */
export type ProviderEvent =
  | { id: string; type: string; kind: "paid"; payment: PaymentFacts }
  | {
      id: string;
      type: string;
      kind: "refunded";
      paymentId: string;
      /** Ours, where the charge carries it (Stripe copies the payment's metadata to its charge). */
      topUpId: string | undefined;
      refunded: Units;
      currency: string;
    }
  | { id: string; type: string; kind: "dispute"; paymentId: string; dispute: DisputeFacts }
  | { id: string; type: string; kind: "ignored" };

/**
 * One step of a card dispute. `withdrawn`: the provider took the disputed money; `reinstated`: it
 * gave it back; `closed`: decided (`status` says won or lost); `opened` and `updated` move nothing.
 */
export interface DisputeFacts {
  id: string;
  step: "opened" | "updated" | "withdrawn" | "reinstated" | "closed";
  /** The provider's own status word: needs_response, under_review, won, lost, warning_closed, ... */
  status: string;
  amount: Units;
  currency: string;
}

/** A payment the provider reports as received. */
export interface PaymentFacts {
  /** Ours, sent with the checkout as metadata. */
  topUpId: string | undefined;
  sessionId: string | undefined;
  paymentId: string | undefined;
  amount: Units;
  currency: string;
}

export class BadSignature extends Error {}
