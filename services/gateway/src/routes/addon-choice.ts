/**
 * An add-on as a customer chooses one: the body of POST /services/{id}/options, and each entry of
 * an order item's `addons`, one schema so an order accepts exactly the add-ons a purchase does.
 */
import { BillingCycle } from "@hb/contracts/hb/billing/v1/common_pb";
import { badRequest } from "@hb/platform";
import { z } from "zod";
import { addonBillingTypes } from "../mappers/addon.ts";
import { billingCycleWords } from "../mappers/enums.ts";
import { idParam } from "../schemas.ts";
import { CYCLES } from "../wire/money.ts";
import { ADDON_BILLING_TYPE_WORDS } from "../wire/words.ts";

const quantityRule = "must be a whole number from 1 to 100";
export const addonChoice = z.object({
  optionId: idParam,
  billingType: z.enum(ADDON_BILLING_TYPE_WORDS, {
    error: `must be ${ADDON_BILLING_TYPE_WORDS.join(" or ")}`,
  }),
  billingCycle: z.string().optional(),
  quantity: z
    .number({ error: quantityRule })
    .int({ error: quantityRule })
    .min(1, { error: quantityRule })
    .max(100, { error: quantityRule })
    .default(1),
});

/** A recurring add-on's cycle; absent is UNSPECIFIED, which billing reads as monthly. */
function addonCycleOf(cycle: string | undefined, field: string): BillingCycle {
  if (cycle === undefined) return BillingCycle.UNSPECIFIED;
  if (!(CYCLES as readonly string[]).includes(cycle))
    throw badRequest(field, `unknown billingCycle "${cycle}"`);
  return billingCycleWords.value(cycle as (typeof CYCLES)[number]) ?? 0;
}

/** A chosen add-on as billing takes it; `field` names its billingCycle in an error. */
export const addonChoiceIn = (a: z.infer<typeof addonChoice>, field = "billingCycle") => ({
  optionId: a.optionId,
  billingType: addonBillingTypes.value(a.billingType) ?? 0,
  billingCycle: addonCycleOf(a.billingCycle, field),
  quantity: a.quantity,
});
