import type { GetServiceStatsResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import {
  CancellationType,
  ServiceAction,
  type ServiceSummary,
} from "@hb/contracts/hb/billing/v1/services_pb";
import type { z } from "zod";
import type { serviceRecord, serviceStats, serviceSummary } from "../wire/service.ts";
import { cycles, productKinds, serviceStatuses } from "./enums.ts";
import { amountNumber, decimal4, isoTime, wireEnum } from "./values.ts";

const cancellationTypes = wireEnum<CancellationType, "end_of_term">("cancellation type", {
  end_of_term: CancellationType.END_OF_TERM,
});

/** The state changes a partner (or staff) asks for by name. */
export const serviceActions = wireEnum<ServiceAction, "suspend" | "unsuspend" | "terminate">(
  "service action",
  {
    suspend: ServiceAction.SUSPEND,
    unsuspend: ServiceAction.UNSUSPEND,
    terminate: ServiceAction.TERMINATE,
  },
);

/**
 * The service record, from billing's typed service: the list, the cancel and withdraw answers, and
 * the billing half of the VPS and dedicated records.
 */
export function serviceSummaryJson(s: ServiceSummary): z.infer<typeof serviceSummary> {
  return {
    id: s.id,
    name: s.name,
    hostname: s.hostname,
    kind: productKinds.toWire(s.kind),
    status: serviceStatuses.toWire(s.status),
    product: { id: s.product?.id ?? "", name: s.product?.name ?? "" },
    billing: {
      cycle: cycles.toWire(s.billing?.cycle ?? 0),
      amount: decimal4(s.billing?.price),
      currency: s.billing?.price?.currency ?? "",
      next_due_date: isoTime(s.billing?.nextDueDate),
    },
    cancellation: s.cancellation
      ? {
          type: cancellationTypes.toWire(s.cancellation.type),
          reason: s.cancellation.reason,
          requested_at: isoTime(s.cancellation.requestedAt),
          effective_at: isoTime(s.cancellation.effectiveAt),
        }
      : null,
    created_at: isoTime(s.createdAt),
  };
}

/** The service as billing records it (GET /services/{id}, an order's services). */
export function serviceRecordJson(s: ServiceSummary): z.infer<typeof serviceRecord> {
  return { ...serviceSummaryJson(s), order_id: s.orderId ?? null, failure_reason: s.failureReason ?? null };
}

/** The stats object of the services list. */
export function serviceStatsJson(stats: GetServiceStatsResponse): z.infer<typeof serviceStats> {
  const rows = stats.byStatus.map((r) => ({ ...r, word: serviceStatuses.toWire(r.status) }));
  return {
    total: rows.reduce((n, r) => n + r.count, 0),
    by_status: Object.fromEntries(rows.map((r) => [r.word, r.count])),
    amount_by_status: Object.fromEntries(rows.map((r) => [r.word, amountNumber(r.amount)])),
  };
}
