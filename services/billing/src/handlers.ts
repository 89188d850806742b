import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingDeskService } from "@hb/contracts/hb/billing/v1/billing_desk_pb";
import type { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import type { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";

/**
 * Some of billing's handlers, customer-facing or staff; main binds the union to each service
 * definition, and each definition serves only its own methods.
 */
export type BillingHandlers = Partial<
  ServiceImpl<typeof BillingService> &
    ServiceImpl<typeof BillingStaffService> &
    ServiceImpl<typeof BillingDeskService>
>;
