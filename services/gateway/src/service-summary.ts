import type { ServiceSummary } from "@hb/contracts/hb/billing/v1/billing_pb";

/** Billing's typed service summary in the customer API's wire shape (snake_case, nulls). */
export function serviceSummaryJson(s: ServiceSummary) {
  return {
    id: s.id,
    name: s.name,
    hostname: s.hostname,
    kind: s.kind,
    status: s.status,
    product: s.product ? { id: s.product.id, name: s.product.name } : null,
    billing: s.billing
      ? {
          cycle: s.billing.cycle,
          amount: s.billing.amount,
          currency: s.billing.currency,
          next_due_date: s.billing.nextDueDate,
        }
      : null,
    cancellation: s.cancellation
      ? {
          type: s.cancellation.type,
          reason: s.cancellation.reason,
          requested_at: s.cancellation.requestedAt,
          effective_at: s.cancellation.effectiveAt,
        }
      : null,
    created_at: s.createdAt,
  };
}
