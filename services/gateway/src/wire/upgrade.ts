import { z } from "zod";
import { invoice, invoiceExample } from "./invoice.ts";
import { cycle, decimal4 } from "./money.ts";
import { orderStatus, paymentStatus } from "./order.ts";
import { UPGRADE_KIND_WORDS, UPGRADE_STATUS_WORDS } from "./words.ts";

/** An upgrade (spec, States): awaiting_payment, executing, completed; or cancelled by the customer. */
export const upgrade = z.object({
  id: z.uuid(),
  service_id: z.uuid(),
  type: z.enum(UPGRADE_KIND_WORDS),
  status: z.enum(UPGRADE_STATUS_WORDS),
  from_product_id: z.uuid(),
  to_product_id: z.uuid().nullable(),
  add_options: z.array(z.uuid()),
  remove_options: z.array(z.uuid()),
  amount: z.number().meta({ description: "net change: negative when it nets to a credit" }),
  credit: z.number(),
  priced_until: z.iso.datetime().nullable(),
  document: invoice.nullable().meta({ description: "null when the change nets to zero or a credit" }),
  order_id: z.uuid().nullable(),
  created_at: z.iso.datetime(),
  completed_at: z.iso.datetime().nullable(),
});

/** GET /upgrades/{id}: the upgrade with the order it created. */
export const upgradeDetail = upgrade.extend({
  order: z
    .object({ id: z.uuid(), order_number: z.string(), status: orderStatus, payment_status: paymentStatus })
    .nullable(),
});

/** GET /services/{id}/upgrades: upgrade paths with a prorated preview, plus any pending upgrade. */
export const upgradePaths = z.object({
  current: z.object({ product_id: z.uuid(), name: z.string(), amount: decimal4, cycle }),
  paths: z.array(
    z.object({
      product_id: z.uuid(),
      name: z.string(),
      price: decimal4,
      cycle,
      prorated_amount: z.number().meta({
        description:
          "the quote: the price difference from now to paid_until (negative: a credit); a charge holds until quote_expires_at",
      }),
      paid_until: z.iso.datetime(),
      next_due_date: z.iso.datetime(),
      quote_expires_at: z.iso.datetime().nullable().meta({
        description:
          "until when prorated_amount holds: asked again, the same amount; an upgrade requested before then is invoiced at exactly it, and that invoice paid before then charges exactly its total (paid later, it is re-priced down to the time left). null for a credit, priced when requested",
      }),
    }),
  ),
  pending_upgrade: upgrade.nullable(),
});

export const upgradeExample = {
  id: "0195e3a3-4b5c-7d6e-8f7a-8b9c0d1e2f3a",
  service_id: "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c11",
  type: "product",
  status: "awaiting_payment",
  from_product_id: "0195e39f-1a2b-7c3d-8e4f-5a6b7c8d9e01",
  to_product_id: "0195e39f-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
  add_options: [],
  remove_options: [],
  amount: 6.25,
  credit: 0,
  priced_until: "2026-12-23T10:00:00.000Z",
  document: {
    ...invoiceExample,
    invoice_number: "INV-2026-1044",
    number: "INV-2026-1044",
    total: 6.25,
    amount_due: 6.25,
    purpose: "upgrade",
    order_id: "0195e3a3-4b5d-7e6f-8a7b-9c0d1e2f3a4b",
  },
  order_id: "0195e3a3-4b5d-7e6f-8a7b-9c0d1e2f3a4b",
  created_at: "2026-11-23T10:00:00.000Z",
  completed_at: null,
};

export const upgradeDetailExample = {
  ...upgradeExample,
  order: {
    id: upgradeExample.order_id,
    order_number: "ORD-5121",
    status: "pending",
    payment_status: "unpaid",
  },
};

export const upgradePathsExample = {
  current: {
    product_id: upgradeExample.from_product_id,
    name: "VPS Small",
    amount: "12.5000",
    cycle: "monthly",
  },
  paths: [
    {
      product_id: upgradeExample.to_product_id,
      name: "VPS Medium",
      price: "25.0000",
      cycle: "monthly",
      prorated_amount: 6.25,
      paid_until: "2026-12-23T10:00:00.000Z",
      next_due_date: "2026-12-23T10:00:00.000Z",
      quote_expires_at: "2026-11-23T10:30:00.000Z",
    },
  ],
  pending_upgrade: null,
};
