import { z } from "zod";
import { invoice, invoiceExample } from "./invoice.ts";
import { decimal4 } from "./money.ts";
import { ADDON_BILLING_TYPE_WORDS, ADDON_STATUS_WORDS, BILLING_CYCLE_WORDS, without } from "./words.ts";

/** An add-on the service holds (cancelled ones leave the list). */
export const addon = z.object({
  id: z.uuid(),
  option_id: z.uuid().meta({ description: "the catalogue option; DELETE takes this id" }),
  name: z.string(),
  billing_type: z.enum(ADDON_BILLING_TYPE_WORDS),
  billing_cycle: z.enum(BILLING_CYCLE_WORDS),
  quantity: z.int().min(1),
  amount: decimal4,
  paid_amount: decimal4,
  // A cancelled add-on leaves the list, so the wire has no word for that status.
  status: z.enum(without(ADDON_STATUS_WORDS, "cancelled")),
  started_at: z.iso.datetime(),
  next_due_date: z.iso.datetime().nullable(),
});

export const addonList = z.object({ options: z.array(addon) });

const perCycle = z.object({
  monthly: z.number(),
  quarterly: z.number(),
  semiannually: z.number(),
  annually: z.number(),
  biennially: z.number(),
});

/** An add-on the product offers, with its prices; `held` marks the ones the service has. */
export const availableAddonList = z.object({
  options: z.array(
    z.object({
      id: z.uuid(),
      name: z.string(),
      prices: z.object({
        recurring: perCycle.nullable().meta({ description: "price of a cycle, by cycle" }),
        one_time: z.number().nullable(),
      }),
      held: z.boolean(),
    }),
  ),
});

/** The purchase: the add-on, its invoice, and whether credit settled it. */
export const addonPurchase = z.object({
  addon,
  invoice,
  settled: z.boolean(),
  credit_balance: z.number(),
});

export const addonCancellation = z.object({
  option_id: z.uuid(),
  status: z.literal("cancelled"),
  cancelled: z.int().min(1).meta({ description: "how many rows of that option ended" }),
  credit: z.number().meta({ description: "unused share returned to the payer" }),
});

export const addonExample = {
  id: "0195e3a2-1a2b-7c3d-8e4f-5a6b7c8d9e0f",
  option_id: "0195e39f-3c4d-7e5f-8a6b-7c8d9e0f1a2b",
  name: "Extra IPv4",
  billing_type: "recurring",
  billing_cycle: "monthly",
  quantity: 1,
  amount: "2.0000",
  paid_amount: "2.0000",
  status: "active",
  started_at: "2026-11-23T10:00:00.000Z",
  next_due_date: "2026-12-23T10:00:00.000Z",
};

export const addonListExample = { options: [addonExample] };

export const availableAddonListExample = {
  options: [
    {
      id: addonExample.option_id,
      name: "Extra IPv4",
      prices: {
        recurring: { monthly: 2, quarterly: 6, semiannually: 12, annually: 24, biennially: 48 },
        one_time: null,
      },
      held: true,
    },
  ],
};

export const addonPurchaseExample = {
  addon: addonExample,
  invoice: {
    ...invoiceExample,
    purpose: "addon",
    status: "paid",
    total: 2,
    amount_paid: 2,
    amount_due: 0,
    paid_at: "2026-11-23T10:00:00.000Z",
  },
  settled: true,
  credit_balance: 85.5,
};

export const addonCancellationExample = {
  option_id: addonExample.option_id,
  status: "cancelled",
  cancelled: 1,
  credit: 1.9333,
};
