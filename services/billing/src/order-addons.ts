/**
 * Add-ons chosen at order time (issue 29 §5). Each is priced as buying it on the service would
 * charge (addon-pricing.ts), billed by a line of the order's document naming the item's service,
 * and written with the service as `pending_payment` without a document of its own; paying the
 * order starts them with the service's term (startOrderAddonsCte, from order-paid.ts). An order never
 * paid leaves them pending on services that never start; ending such a service cancels them, and
 * refunds and termination treat started ones as any bought add-on (refunds.ts).
 */
import type { OrderItem } from "@hb/contracts/hb/billing/v1/orders_pb";
import { badRequest, isUuid, newId, type Sql, type TxSql } from "@hb/platform";
import { type AddonBillingType, addonCharge, addonCycle } from "./addon-pricing.ts";
import { addonBillingType } from "./enums.ts";
import { addCycle, CYCLE_MONTHS, formatMoney, HOURLY, type Units } from "./money.ts";
import type { OptionRow } from "./records.ts";

export const MAX_ADDON_QUANTITY = 100;

/** An add-on of an order item, priced. */
export interface PricedAddon {
  optionId: string;
  name: string;
  billingType: AddonBillingType;
  cycle: string;
  quantity: number;
  amount: Units;
}

/**
 * Checks and prices every item's add-ons (one statement reads the options, none when no item has
 * any). `prefix(i)` is how the item's fields are named in errors ("" or "items.<i>."). The first
 * add-on at fault, in the order sent, is refused, naming its field.
 */
export async function priceOrderAddons(
  db: Sql | TxSql,
  items: { item: OrderItem; productId: string; cycle: string }[],
  prefix: (i: number) => string,
): Promise<PricedAddon[][]> {
  const wanted = items.flatMap(({ item }) => item.addons.map((a) => a.optionId)).filter(isUuid);
  const options = wanted.length
    ? await db<OptionRow[]>`select * from product_options where id = any(${[...new Set(wanted)]}::uuid[])`
    : [];
  const byId = new Map(options.map((o) => [o.id, o]));
  return items.map(({ item, productId, cycle }, i) => {
    if (item.addons.length > 0 && cycle === HOURLY)
      // An hourly service has no paid term for an add-on's cycle to start with.
      throw badRequest(`${prefix(i)}addons`, "add-ons cannot be ordered with an hourly item");
    const chosen = new Set<string>();
    return item.addons.map((a, j) => {
      const f = `${prefix(i)}addons.${j}.`;
      const billingType = addonBillingType.in(a.billingType) as AddonBillingType | undefined;
      if (billingType === undefined) throw badRequest(`${f}billingType`, "must be one_time or recurring");
      if (a.quantity < 0 || a.quantity > MAX_ADDON_QUANTITY)
        throw badRequest(`${f}quantity`, `must be a whole number from 1 to ${MAX_ADDON_QUANTITY}`);
      const o = byId.get(a.optionId);
      if (!o || o.product_id !== productId)
        throw badRequest(`${f}optionId`, "this product offers no such add-on");
      // The new service would hold it twice: as buying it again on the service, refused.
      if (chosen.has(o.id)) throw badRequest(`${f}optionId`, "this add-on is already chosen for the item");
      chosen.add(o.id);
      const cycleOf = addonCycle(billingType, a.billingCycle, `${f}billingCycle`);
      const quantity = a.quantity || 1;
      const amount = addonCharge(o, billingType, cycleOf, quantity);
      if (amount === undefined)
        throw badRequest(`${f}billingType`, `this add-on is not offered as ${billingType}`);
      return { optionId: o.id, name: o.name, billingType, cycle: cycleOf, quantity, amount };
    });
  });
}

/** What an item's add-ons add to the order's total. */
export const addonsTotal = (addons: PricedAddon[]): Units => addons.reduce((s, a) => s + a.amount, 0n);

/** The document lines of an item's add-ons, each naming the item's service (as buying one would read). */
export const addonLines = (addons: PricedAddon[], serviceId: string) =>
  addons.map((a) => ({
    description: `${a.name} × ${a.quantity} (${a.cycle})`,
    amount: a.amount,
    serviceId,
  }));

/**
 * The add-on rows, as a CTE to run with the order's services (written in the same statement);
 * undefined when the order has none.
 */
export function orderAddonsCte(tx: TxSql, items: { addons: PricedAddon[]; serviceId: string }[], now: Date) {
  const rows = items.flatMap(({ addons, serviceId }) =>
    addons.map((a) => ({
      id: newId(),
      service_id: serviceId,
      option_id: a.optionId,
      billing_type: a.billingType,
      cycle: a.cycle,
      quantity: a.quantity,
      amount: formatMoney(a.amount),
      status: "pending_payment",
      started_at: now,
    })),
  );
  if (rows.length === 0) return undefined;
  return tx`addon_rows as (insert into service_addons ${tx(rows)})`;
}

/**
 * Paying the order starts its add-ons with the services' term: active from `now`, a recurring one
 * due a cycle of its own later, each holding what it was billed, funded by the order's document (so
 * giving it up returns the unused share, as for a bought add-on). Only add-ons the order wrote
 * (pending, without a document of their own) on services of that order; cancelled ones stay so.
 * A CTE (`addons_started`) of the statement that starts the order's services (order-paid.ts): it
 * was a statement of its own, run for every paid order, most of which have no add-on. It joins
 * the services by their order, not their status, so the services' update beside it, which reads the
 * same snapshot, changes nothing it reads.
 */
export function startOrderAddonsCte(
  tx: TxSql,
  orderId: string,
  now: Date,
  paid: { documentId: string; invoiceId: string },
) {
  const cycles = Object.keys(CYCLE_MONTHS);
  // The payment is recorded against the paid document (a proforma), the invoice it became apart.
  const funding = [...new Set([paid.documentId, paid.invoiceId])];
  return tx`addons_started as (
    update service_addons a set status = 'active', paid_amount = a.amount, period_start = ${now}, started_at = ${now},
      funding_documents = ${funding}::uuid[],
      next_due_date = case when a.billing_type = 'recurring' then
        (select due.date from unnest(${cycles}::text[], ${cycles.map((c) => addCycle(now, c).toISOString())}::timestamptz[])
           as due(cycle, date) where due.cycle = a.cycle) end
    from services s
    where s.id = a.service_id and s.order_id = ${orderId} and a.status = 'pending_payment' and a.document_id is null)`;
}
