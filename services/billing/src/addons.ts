/**
 * Add-ons of a service (BillingService's add-on calls): what a product offers, buying one (an
 * invoice, paid from credit when the balance covers it), cancelling one (its unused share back),
 * and staff adding an option to a product. A paid add-on invoice starts the add-on
 * (addon-upgrade-paid.ts); changing options by an upgrade is upgrades.ts.
 */

import { create, fromJsonString, type MessageInitShape, toJsonString } from "@bufbuild/protobuf";
import type { AddonSchema } from "@hb/contracts/hb/billing/v1/addons_pb";
import { BuyAddonResponseSchema } from "@hb/contracts/hb/billing/v1/billing_pb";
import { apiError, badRequest, newId, notFound, prepared, type Sql } from "@hb/platform";
import { lockBalance } from "./account-currency.ts";
import { type AddonBillingType, addonCharge, addonCycle } from "./addon-pricing.ts";
import { priceIn } from "./catalogue.ts";
import { clock } from "./clock.ts";
import { moneyOut, timeOut } from "./contract-values.ts";
import { createDocument, payNewDocumentFromCredit } from "./documents.ts";
import { addonBillingType, addonStatus, billingCycle } from "./enums.ts";
import type { BillingHandlers } from "./handlers.ts";
import { remember, replay } from "./idempotency.ts";
import { balanceOf } from "./ledger.ts";
import { CYCLE_MONTHS, formatMoney, money } from "./money.ts";
import type { OptionRow } from "./records.ts";
import { type AddonRow, addonSelect, endAddons, supplierHolds } from "./refunds.ts";
import { isOverdue, renewalOpen } from "./renewals.ts";
import { assertChangeable, ownService } from "./service-state.ts";
import { callerOf, transact } from "./shared.ts";
import { cyclePrice } from "./upgrade-pricing.ts";
// Registers what a paid add-on invoice does: the add-on starts.
import "./addon-upgrade-paid.ts";

/** An add-on in the contract's terms; its money is in the service's currency. */
const addonOut = (a: AddonRow, currency: string): MessageInitShape<typeof AddonSchema> => ({
  id: a.id,
  optionId: a.option_id,
  name: a.name,
  billingType: addonBillingType.out(a.billing_type),
  cycle: billingCycle.out(a.cycle),
  quantity: a.quantity,
  price: moneyOut(a.amount, currency),
  paid: moneyOut(a.paid_amount, currency),
  status: addonStatus.out(a.status),
  startedAt: timeOut(a.started_at),
  nextDueDate: timeOut(a.next_due_date),
});

/** The add-ons a service holds (not cancelled), oldest first. */
const heldAddons = (db: Sql, serviceId: string) =>
  db.unsafe<AddonRow[]>(
    `${addonSelect} where a.service_id = $1 and a.status <> 'cancelled' order by a.started_at`,
    [serviceId],
    prepared,
  );

export function createAddons(sql: Sql, ns: string): BillingHandlers {
  return {
    async listAddons(req) {
      const caller = callerOf(req.caller);
      const s = await ownService(sql, caller.customerId, req.serviceId);
      const held = await heldAddons(sql, s.id);
      return { addons: held.map((a) => addonOut(a, s.currency)) };
    },

    async listOrderAddons(req) {
      const caller = callerOf(req.caller);
      // The order's services and their held add-ons in one statement: a page of an order with
      // fifty services is still one call and one round trip. The left join keeps a service
      // without add-ons; the order row keeps an order without services apart from none at all.
      const rows = await sql.unsafe<(Partial<AddonRow> & { sid: string | null; currency: string | null })[]>(
        `select s.id as sid, s.currency, a.*, opt.name
           from orders o
           left join services s on s.order_id = o.id
           left join service_addons a on a.service_id = s.id and a.status <> 'cancelled'
           left join product_options opt on opt.id = a.option_id
          where o.id = $1 and o.customer_id = $2
          order by s.created_at, s.id, a.started_at`,
        [req.orderId, caller.customerId],
        prepared,
      );
      if (rows.length === 0) throw notFound("Order");
      const services = new Map<string, MessageInitShape<typeof AddonSchema>[]>();
      for (const r of rows) {
        if (!r.sid) continue;
        const held = services.get(r.sid) ?? [];
        services.set(r.sid, held);
        if (r.id) held.push(addonOut(r as AddonRow, r.currency ?? ""));
      }
      return { services: [...services].map(([serviceId, addons]) => ({ serviceId, addons })) };
    },

    async listAddonOffers(req) {
      const caller = callerOf(req.caller);
      const s = await ownService(sql, caller.customerId, req.serviceId);
      const held = await heldAddons(sql, s.id);
      const offered = await sql<
        OptionRow[]
      >`select * from product_options where product_id = ${s.product_id} order by name`;
      return {
        offers: offered.map((o) => ({
          optionId: o.id,
          name: o.name,
          recurringPrices: o.recurring_price
            ? Object.keys(CYCLE_MONTHS).map((c) => ({
                cycle: billingCycle.out(c),
                price: moneyOut(cyclePrice(money(o.recurring_price!), c), s.currency),
              }))
            : [],
          oneTimePrice: o.one_time_price ? moneyOut(o.one_time_price, s.currency) : undefined,
          held: held.some((a) => a.option_id === o.id && a.status === "active"),
        })),
      };
    },

    async buyAddon(req) {
      const caller = callerOf(req.caller);
      // The contract requires a billing type and bounds the quantity.
      const billingType = addonBillingType.defined(req.billingType) as AddonBillingType;
      const cycle = addonCycle(billingType, req.billingCycle, "billingCycle");
      const quantity = req.quantity || 1;
      const out = await transact(sql, async (tx) => {
        const again = await replay(
          tx,
          caller.personId,
          `addon:${req.serviceId}`,
          req.idempotencyKey,
          req.requestHash,
        );
        if (again) return fromJsonString(BuyAddonResponseSchema, again);
        const s = await ownService(tx, caller.customerId, req.serviceId, true);
        assertChangeable(s, caller);
        if (isOverdue(s) || (await renewalOpen(tx, s.id)))
          throw apiError(
            "CONFLICT",
            "A renewal of this service is open or overdue; pay it before buying an add-on",
          );
        const [o] = await tx<
          OptionRow[]
        >`select * from product_options where id = ${req.optionId} and product_id = ${s.product_id}`;
        if (!o)
          throw apiError("NOT_FOUND", "This product offers no such add-on", {
            violations: [{ field: "optionId", message: "not offered" }],
          });
        const amount = addonCharge(o, billingType, cycle, quantity);
        if (amount === undefined)
          throw badRequest("billingType", `This add-on is not offered as ${billingType}`);
        // A recurring add-on's term would run past the service's scheduled end, and be forfeited.
        if (billingType === "recurring" && s.cancellation)
          throw apiError(
            "CONFLICT",
            "A cancellation is scheduled for this service; withdraw it before buying a recurring add-on",
          );
        // A full cycle is charged and the add-on's own cycle starts today.
        const lines = [{ description: `${o.name} × ${quantity} (${cycle})`, amount, serviceId: s.id }];
        const invoice = await createDocument(tx, {
          kind: "invoice",
          customerId: s.customer_id,
          personId: caller.personId,
          currency: s.currency,
          purpose: "addon",
          serviceId: s.id,
          lines,
        });
        const addonId = newId();
        await tx`insert into service_addons (id, service_id, option_id, billing_type, cycle, quantity, amount, status, document_id, next_due_date,
                                             started_at)
          values (${addonId}, ${s.id}, ${o.id}, ${billingType}, ${cycle}, ${quantity}, ${formatMoney(amount)}, 'pending_payment',
                  ${invoice.id}, null, ${clock.now()})`;
        const balance = await lockBalance(tx, caller.personId, caller.customerId, s.currency);
        let settled = false;
        if (balance >= amount) {
          await payNewDocumentFromCredit(tx, ns, { document: invoice, lines }, caller);
          settled = true;
        }
        const [addon] = await tx.unsafe<AddonRow[]>(`${addonSelect} where a.id = $1`, [addonId], prepared);
        const result = create(BuyAddonResponseSchema, {
          addon: addonOut(addon, s.currency),
          invoiceId: invoice.id,
          settled,
          creditBalance: moneyOut(await balanceOf(tx, caller.personId), s.currency),
        });
        await remember(
          tx,
          caller.personId,
          `addon:${req.serviceId}`,
          req.idempotencyKey,
          req.requestHash,
          toJsonString(BuyAddonResponseSchema, result),
        );
        return result;
      });
      return out;
    },

    async cancelAddon(req) {
      const caller = callerOf(req.caller);
      const out = await transact(sql, async (tx) => {
        const s = await ownService(tx, caller.customerId, req.serviceId, true);
        const rows = await tx.unsafe<AddonRow[]>(
          `${addonSelect} where a.service_id = $1 and a.option_id = $2 and a.status <> 'cancelled' for update of a`,
          [s.id, req.optionId],
          prepared,
        );
        if (rows.length === 0) throw notFound("Active add-on");
        // The unused share of what was paid for it goes back to whoever paid (nothing for one-time),
        // unless the supplier holds the service suspended (the abuse rule: nothing is refunded).
        const refund = !supplierHolds(s);
        const worth = await endAddons(tx, rows, clock.now(), { refund, why: "add-on cancelled" });
        const credit = refund ? worth : 0n;
        return { optionId: req.optionId, cancelled: rows.length, credit: moneyOut(credit, s.currency) };
      });
      return out;
    },

    async adminAddProductOption(req) {
      const [p] = await sql<{ currency: string }[]>`
        select currency from products where id = ${req.productId}`;
      if (!p) throw notFound("Product");
      const recurring = priceIn(req.recurringMonthlyPrice, "recurring_monthly_price", p.currency);
      const oneTime = priceIn(req.oneTimePrice, "one_time_price", p.currency);
      if (recurring === undefined && oneTime === undefined) {
        throw badRequest("recurring_monthly_price", "give a recurring (per month) and/or one-time price");
      }
      const id = newId();
      const name = req.name.trim() || "Option";
      await sql`insert into product_options (id, product_id, name, recurring_price, one_time_price)
        values (${id}, ${req.productId}, ${name}, ${recurring === undefined ? null : formatMoney(recurring)},
                ${oneTime === undefined ? null : formatMoney(oneTime)})`;
      const price = (units: bigint | undefined) =>
        units === undefined ? undefined : moneyOut(units, p.currency);
      return { option: { id, name, recurringMonthlyPrice: price(recurring), oneTimePrice: price(oneTime) } };
    },
  };
}
