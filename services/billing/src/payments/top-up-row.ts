/**
 * The shapes the card and transfer modules share (top-ups.ts, disputes.ts, card-review.ts), in a
 * module of their own so none of them imports another for a type.
 */

/** A row of `top_ups`. */
export interface TopUpRow {
  id: string;
  method: "card" | "bank_transfer";
  status: "pending" | "credited" | "cancelled";
  customer_id: string;
  person_id: string;
  currency: string;
  requested: string;
  received: string | null;
  reference: string | null;
  provider_session: string | null;
  provider_payment: string | null;
  checkout_url: string | null;
  refunded: string;
  disputed: boolean;
  refund_shortfall: string;
  confirmed_by: string | null;
  created_at: Date;
  credited_at: Date | null;
  /** The credit's ledger entry, once credited. */
  ledger_id: string | null;
}

/** What billing did with an event (provider_events.outcome); `flagged` and `unmatched` need a person. */
export interface Outcome {
  outcome:
    | "credited"
    | "refund_debited"
    | "dispute_debited"
    | "dispute_reinstated"
    | "recorded"
    | "unmatched"
    | "flagged";
  detail: string;
  topUpId?: string;
}
