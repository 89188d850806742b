import {
  type Addon,
  AddonBillingTypeSchema,
  type AddonOffer,
  AddonStatusSchema,
} from "@hb/contracts/hb/billing/v1/addons_pb";
import type { BuyAddonResponse, CancelAddonResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import type { Money } from "@hb/contracts/hb/platform/v1/money_pb";
import type { z } from "zod";
import type { addon, addonCancellation, addonPurchase, availableAddonList } from "../wire/addon.ts";
import type { invoice } from "../wire/invoice.ts";
import { ADDON_BILLING_TYPE_WORDS, ADDON_STATUS_WORDS, without } from "../wire/words.ts";
import { amountNumber, decimal4, enumWords, iso, isoOrNull } from "./contract.ts";
import { addonCycleWords } from "./enums.ts";

export const addonBillingTypes = enumWords(
  "add-on billing type",
  AddonBillingTypeSchema,
  ADDON_BILLING_TYPE_WORDS,
);

// A cancelled add-on leaves the list, so the wire has no word for that status.
const addonStatuses = enumWords("add-on status", AddonStatusSchema, without(ADDON_STATUS_WORDS, "cancelled"));

/** An add-on the service holds. */
export function addonJson(a: Addon): z.infer<typeof addon> {
  return {
    id: a.id,
    option_id: a.optionId,
    name: a.name,
    billing_type: addonBillingTypes.wire(a.billingType),
    billing_cycle: addonCycleWords.wire(a.cycle),
    quantity: a.quantity,
    amount: decimal4(a.price),
    paid_amount: decimal4(a.paid),
    status: addonStatuses.wire(a.status),
    started_at: iso(a.startedAt),
    next_due_date: isoOrNull(a.nextDueDate),
  };
}

/** The add-ons a product offers, with a price per cycle. */
export function addonOffersJson(offers: AddonOffer[]): z.infer<typeof availableAddonList> {
  return {
    options: offers.map((o) => {
      const byCycle = new Map<string, Money | undefined>(
        o.recurringPrices.map((p) => [addonCycleWords.wire(p.cycle), p.price]),
      );
      const price = (cycle: string) => amountNumber(byCycle.get(cycle));
      return {
        id: o.optionId,
        name: o.name,
        prices: {
          recurring: byCycle.size
            ? {
                monthly: price("monthly"),
                quarterly: price("quarterly"),
                semiannually: price("semiannually"),
                annually: price("annually"),
                biennially: price("biennially"),
              }
            : null,
          one_time: o.oneTimePrice ? amountNumber(o.oneTimePrice) : null,
        },
        held: o.held,
      };
    }),
  };
}

/** The purchase, with its invoice in the invoice record's shape. */
export function addonPurchaseJson(
  r: BuyAddonResponse,
  invoiceRecord: z.infer<typeof invoice>,
): z.infer<typeof addonPurchase> {
  return {
    addon: addonJson(r.addon!),
    invoice: invoiceRecord,
    settled: r.settled,
    credit_balance: amountNumber(r.creditBalance),
  };
}

export function addonCancellationJson(r: CancelAddonResponse): z.infer<typeof addonCancellation> {
  return {
    option_id: r.optionId,
    status: "cancelled",
    cancelled: r.cancelled,
    credit: amountNumber(r.credit),
  };
}
