import type { ListUpgradePathsResponse } from "@hb/contracts/hb/billing/v1/billing_pb";
import {
  type Upgrade,
  UpgradeKindSchema,
  UpgradeStatusSchema,
} from "@hb/contracts/hb/billing/v1/upgrades_pb";
import type { z } from "zod";
import type { invoice } from "../wire/invoice.ts";
import type { upgrade, upgradeDetail, upgradePaths } from "../wire/upgrade.ts";
import { UPGRADE_KIND_WORDS, UPGRADE_STATUS_WORDS } from "../wire/words.ts";
import { amountNumber, decimal4, enumWords, iso, isoOrNull } from "./contract.ts";
import { billingCycleWords } from "./enums.ts";

type Invoice = z.infer<typeof invoice>;
type UpgradeOrder = z.infer<typeof upgradeDetail>["order"];

const upgradeKinds = enumWords("upgrade kind", UpgradeKindSchema, UPGRADE_KIND_WORDS);
const upgradeStatuses = enumWords("upgrade status", UpgradeStatusSchema, UPGRADE_STATUS_WORDS);

/** An upgrade with its invoice (null when the change nets to zero or a credit). */
export function upgradeJson(u: Upgrade, document: Invoice | null): z.infer<typeof upgrade> {
  return {
    id: u.id,
    service_id: u.serviceId,
    type: upgradeKinds.wire(u.kind),
    status: upgradeStatuses.wire(u.status),
    from_product_id: u.fromProductId,
    to_product_id: u.toProductId ?? null,
    add_options: u.addOptionIds,
    remove_options: u.removeOptionIds,
    amount: amountNumber(u.amount),
    credit: amountNumber(u.credit),
    priced_until: isoOrNull(u.pricedUntil),
    document,
    order_id: u.orderId ?? null,
    created_at: iso(u.createdAt),
    completed_at: isoOrNull(u.completedAt),
  };
}

/** GET /upgrades/{id}: the upgrade with the order it created. */
export function upgradeDetailJson(
  u: Upgrade,
  document: Invoice | null,
  order: UpgradeOrder,
): z.infer<typeof upgradeDetail> {
  return { ...upgradeJson(u, document), order };
}

/** The paths from the service's product, and the upgrade still pending (with its invoice). */
export function upgradePathsJson(
  r: ListUpgradePathsResponse,
  pendingDocument: Invoice | null,
): z.infer<typeof upgradePaths> {
  const current = r.current!;
  return {
    current: {
      product_id: current.productId,
      name: current.name,
      amount: decimal4(current.price),
      cycle: billingCycleWords.wire(current.cycle),
    },
    paths: r.paths.map((p) => ({
      product_id: p.productId,
      name: p.name,
      price: decimal4(p.price),
      cycle: billingCycleWords.wire(p.cycle),
      prorated_amount: amountNumber(p.proratedAmount),
      paid_until: iso(p.paidUntil),
      // The service keeps its due date: an upgrade is paid up to it.
      next_due_date: iso(p.paidUntil),
      quote_expires_at: isoOrNull(p.quoteExpiresAt),
    })),
    pending_upgrade: r.pendingUpgrade ? upgradeJson(r.pendingUpgrade, pendingDocument) : null,
  };
}
