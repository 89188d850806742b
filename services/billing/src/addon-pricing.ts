/**
 * What buying an add-on charges, one rule for both ways of buying one: on an active service
 * (addons.ts) and with an order (order-addons.ts). A full cycle of a recurring add-on, or its
 * one-time price, times the quantity.
 */
import { BillingCycle } from "@hb/contracts/hb/billing/v1/common_pb";
import { badRequest } from "@hb/platform";
import { billingCycle } from "./enums.ts";
import { CYCLE_MONTHS, money, type Units } from "./money.ts";
import type { OptionRow } from "./records.ts";
import { cyclePrice } from "./upgrade-pricing.ts";

export type AddonBillingType = "one_time" | "recurring";

/**
 * The add-on's stored cycle: "one_time" for a one-time add-on, the requested cycle (unspecified:
 * monthly) for a recurring one. Add-ons are billed by the month or longer: an hourly add-on would
 * charge a month for an hour, so any other cycle is refused naming `field`.
 */
export function addonCycle(billingType: AddonBillingType, requested: BillingCycle, field: string): string {
  if (billingType !== "recurring") return "one_time";
  const cycle = requested === BillingCycle.UNSPECIFIED ? "monthly" : billingCycle.in(requested);
  if (cycle === undefined || !(cycle in CYCLE_MONTHS))
    throw badRequest(
      field,
      `billingCycle must be one of ${Object.keys(CYCLE_MONTHS).join(", ")} for a recurring add-on`,
    );
  return cycle;
}

/** What the add-on charges; undefined when the option is not offered with that billing type. */
export function addonCharge(
  o: OptionRow,
  billingType: AddonBillingType,
  cycle: string,
  quantity: number,
): Units | undefined {
  const unit = billingType === "recurring" ? o.recurring_price : o.one_time_price;
  if (unit === null) return undefined;
  return (billingType === "recurring" ? cyclePrice(money(unit), cycle) : money(unit)) * BigInt(quantity);
}
