import type { GetServiceStatsResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import {
  CancellationTypeSchema,
  ServiceActionSchema,
  type ServiceSummary,
} from "@hb/contracts/hb/billing/v1/services_pb";
import type { z } from "zod";
import type { serviceRecord, serviceStats, serviceSummary } from "../wire/service.ts";
import { CANCELLATION_TYPE_WORDS, SERVICE_ACTION_WORDS } from "../wire/words.ts";
import { amountNumber, decimal4, enumWords, iso } from "./contract.ts";
import { billingCycleWords, productKindWords, serviceStatusWords } from "./enums.ts";

export const cancellationTypes = enumWords(
  "cancellation type",
  CancellationTypeSchema,
  CANCELLATION_TYPE_WORDS,
);

/** The state changes a partner (or staff) asks for by name. */
export const serviceActions = enumWords("service action", ServiceActionSchema, SERVICE_ACTION_WORDS);

/**
 * The service record, from billing's typed service: the list, the cancel and withdraw answers, and
 * the billing half of the VPS and dedicated records.
 */
export function serviceSummaryJson(s: ServiceSummary): z.infer<typeof serviceSummary> {
  return {
    id: s.id,
    name: s.name,
    hostname: s.hostname,
    kind: productKindWords.wire(s.kind),
    status: serviceStatusWords.wire(s.status),
    product: { id: s.product?.id ?? "", name: s.product?.name ?? "" },
    billing: {
      cycle: billingCycleWords.wire(s.billing?.cycle ?? 0),
      amount: decimal4(s.billing?.price),
      currency: s.billing?.price?.currency ?? "",
      next_due_date: iso(s.billing?.nextDueDate),
    },
    cancellation: s.cancellation
      ? {
          type: cancellationTypes.wire(s.cancellation.type),
          reason: s.cancellation.reason,
          requested_at: iso(s.cancellation.requestedAt),
          effective_at: iso(s.cancellation.effectiveAt),
        }
      : null,
    created_at: iso(s.createdAt),
  };
}

/** The service as billing records it (GET /services/{id}, an order's services). */
export function serviceRecordJson(s: ServiceSummary): z.infer<typeof serviceRecord> {
  return { ...serviceSummaryJson(s), order_id: s.orderId ?? null, failure_reason: s.failureReason ?? null };
}

/** The stats object of the services list. */
export function serviceStatsJson(stats: GetServiceStatsResponse): z.infer<typeof serviceStats> {
  const rows = stats.byStatus.map((r) => ({ ...r, word: serviceStatusWords.wire(r.status) }));
  return {
    total: rows.reduce((n, r) => n + r.count, 0),
    by_status: Object.fromEntries(rows.map((r) => [r.word, r.count])),
    amount_by_status: Object.fromEntries(rows.map((r) => [r.word, amountNumber(r.amount)])),
  };
}
