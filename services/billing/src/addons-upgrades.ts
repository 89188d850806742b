import { create, fromJsonString, type MessageInitShape, toJsonString } from "@bufbuild/protobuf";
import type { AddonSchema } from "@hb/contracts/hb/billing/v1/addons_pb";
import { BuyAddonResponseSchema, RequestUpgradeResponseSchema } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingCycle } from "@hb/contracts/hb/billing/v1/common_pb";
import type { UpgradeSchema } from "@hb/contracts/hb/billing/v1/upgrades_pb";
import { apiError, badRequest, newId, notFound, prepared, type Sql, type TxSql } from "@hb/platform";
import { currencyMismatch, lockBalance } from "./account-currency.ts";
import { priceIn } from "./catalogue.ts";
import { clock } from "./clock.ts";
import { moneyOut, timeOut } from "./contract-values.ts";
import { createDocument, payNewDocumentFromCredit } from "./documents.ts";
import { addonBillingType, addonStatus, billingCycle, upgradeKind, upgradeStatus } from "./enums.ts";
import type { BillingHandlers } from "./handlers.ts";
import { remember, replay } from "./idempotency.ts";
import { balanceOf, refundPayments } from "./ledger.ts";
import { addCycle, CYCLE_MONTHS, formatMoney, max, money, type Units } from "./money.ts";
import { dispatchPaid, onDocumentPaid } from "./paid-dispatch.ts";
import { remainingShare } from "./proration.ts";
import { type DocumentRow, type ServiceRow, selectServices } from "./records.ts";
import {
  type AddonRow,
  addonSelect,
  addonValue,
  cancelDocument,
  endAddons,
  serviceDocuments,
  supplierHolds,
} from "./refunds.ts";
import { isOverdue, renewalOpen } from "./renewals.ts";
import { ownService } from "./service-state.ts";
import { callerOf, transact } from "./shared.ts";
import { cyclePrice, optionCharges, pricedFrom, quoteUpgrade, upgradePrice } from "./upgrade-pricing.ts";

interface OptionRow {
  id: string;
  product_id: string;
  name: string;
  recurring_price: string | null;
  one_time_price: string | null;
}
interface UpgradeRow {
  id: string;
  service_id: string;
  kind: string;
  from_product_id: string;
  to_product_id: string | null;
  add_options: string[];
  remove_options: string[];
  amount: string;
  status: string;
  document_id: string | null;
  order_id: string | null;
  priced_until: Date | null;
  credit: string;
  created_at: Date;
  completed_at: Date | null;
  priced_at: Date | null;
}

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

/** An upgrade in the contract's terms; its money is in the service's currency. */
const upgradeOut = (u: UpgradeRow, currency: string): MessageInitShape<typeof UpgradeSchema> => ({
  id: u.id,
  serviceId: u.service_id,
  kind: upgradeKind.out(u.kind),
  status: upgradeStatus.out(u.status),
  fromProductId: u.from_product_id,
  toProductId: u.to_product_id ?? undefined,
  addOptionIds: u.add_options,
  removeOptionIds: u.remove_options,
  amount: moneyOut(u.amount, currency),
  credit: moneyOut(u.credit, currency),
  pricedUntil: timeOut(u.priced_until),
  invoiceId: u.document_id ?? undefined,
  orderId: u.order_id ?? undefined,
  createdAt: timeOut(u.created_at),
  completedAt: timeOut(u.completed_at),
});

function assertChangeable(s: ServiceRow, caller: { currency: string }) {
  if (s.status !== "active")
    throw apiError("CONFLICT", `Add-ons and upgrades need an active service (this one is ${s.status})`);
  if (caller.currency && caller.currency !== s.currency) throw currencyMismatch(s.currency, caller.currency);
}

export function createAddonsUpgrades(sql: Sql, ns: string): BillingHandlers {
  /** The currency of the service an upgrade changes (the account's when it was ordered). */
  const serviceCurrency = async (db: Sql | TxSql, serviceId: string) =>
    (await db<{ currency: string }[]>`select currency from services where id = ${serviceId}`)[0].currency;

  return {
    async listAddons(req) {
      const caller = callerOf(req.caller);
      const s = await ownService(sql, caller.customerId, req.serviceId);
      const held = await heldAddons(sql, s.id);
      return { addons: held.map((a) => addonOut(a, s.currency)) };
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
      const billingType = addonBillingType.defined(req.billingType);
      const cycle =
        billingType !== "recurring"
          ? "one_time"
          : req.billingCycle === BillingCycle.UNSPECIFIED
            ? "monthly"
            : billingCycle.in(req.billingCycle);
      // Add-ons are billed by the month or longer: an hourly add-on would charge a month for an hour.
      if (cycle === undefined || (billingType === "recurring" && !(cycle in CYCLE_MONTHS)))
        throw badRequest(
          "billingCycle",
          `billingCycle must be one of ${Object.keys(CYCLE_MONTHS).join(", ")} for a recurring add-on`,
        );
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
        const unit = billingType === "recurring" ? o.recurring_price : o.one_time_price;
        if (unit === null) throw badRequest("billingType", `This add-on is not offered as ${billingType}`);
        // A recurring add-on's term would run past the service's scheduled end, and be forfeited.
        if (billingType === "recurring" && s.cancellation)
          throw apiError(
            "CONFLICT",
            "A cancellation is scheduled for this service; withdraw it before buying a recurring add-on",
          );
        // A full cycle is charged and the add-on's own cycle starts today.
        const amount =
          (billingType === "recurring" ? cyclePrice(money(unit), cycle) : money(unit)) * BigInt(quantity);
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

    async listUpgradePaths(req) {
      const caller = callerOf(req.caller);
      const s = await ownService(sql, caller.customerId, req.serviceId);
      const now = clock.now();
      const targets = await sql<{ id: string; name: string; price: string }[]>`
        select p.id, p.name, pp.price from products p join product_prices pp on pp.product_id = p.id and pp.cycle = ${s.cycle}
        where p.kind = ${s.kind} and p.active and p.id <> ${s.product_id} and p.currency = ${s.currency} order by pp.price`;
      const [pending] = await sql<
        UpgradeRow[]
      >`select * from upgrades where service_id = ${s.id} and status in ('awaiting_payment', 'executing')`;
      // Each path's price is a quote that holds until it expires (upgrade-pricing.ts).
      const quotes = await Promise.all(
        targets.map((t) =>
          quoteUpgrade(
            sql,
            {
              serviceId: s.id,
              toProductId: t.id,
              cycle: s.cycle,
              serviceAmount: money(s.amount),
              targetPrice: money(t.price),
              pricedUntil: s.next_due_date,
            },
            now,
          ),
        ),
      );
      return {
        current: {
          productId: s.product_id,
          name: s.product_name,
          price: moneyOut(s.amount, s.currency),
          cycle: billingCycle.out(s.cycle),
        },
        paths: targets.map((t, i) => ({
          productId: t.id,
          name: t.name,
          price: moneyOut(t.price, s.currency),
          cycle: billingCycle.out(s.cycle),
          // The prorated amount covers the time from the quote to the date the service is paid up to.
          proratedAmount: moneyOut(quotes[i].amount, s.currency),
          paidUntil: timeOut(s.next_due_date),
          quoteExpiresAt: timeOut(quotes[i].expiresAt ?? null),
        })),
        pendingUpgrade: pending ? upgradeOut(pending, s.currency) : undefined,
      };
    },

    async requestUpgrade(req) {
      const caller = callerOf(req.caller);
      const byProduct = req.toProductId !== "";
      if (!byProduct) {
        if (req.addOptions.length === 0 && req.removeOptions.length === 0) {
          throw badRequest("addOptions", "addOptions or removeOptions must name at least one option");
        }
        const overlap = req.addOptions.find((o) => req.removeOptions.includes(o));
        if (overlap) throw badRequest("removeOptions", `option ${overlap} is both added and removed`);
      }
      const out = await transact(sql, async (tx) => {
        const again = await replay(
          tx,
          caller.personId,
          `upgrade:${req.serviceId}`,
          req.idempotencyKey,
          req.requestHash,
        );
        if (again) return fromJsonString(RequestUpgradeResponseSchema, again);
        const s = await ownService(tx, caller.customerId, req.serviceId, true);
        assertChangeable(s, caller);
        // Overdue, the time until the paid-up date is nothing, and so would the upgrade cost.
        if (isOverdue(s))
          throw apiError("CONFLICT", "The service is overdue; pay its renewal before upgrading");
        if (await upgradeAwaitingPayment(tx, s.id))
          throw apiError(
            "CONFLICT",
            "An upgrade is already awaiting payment for this service; pay or cancel it first",
          );
        const now = clock.now();
        // Priced from now to the date the service is paid up to, whatever documents are open.
        const share = remainingShare(s.next_due_date, s.cycle, now);
        const until = s.next_due_date.toISOString().slice(0, 10);
        const id = newId();
        let charge: Units; // what the invoice asks for (0: nothing to pay)
        let credit = 0n; // what giving things up is worth now
        let description: string;
        let removed: AddonRow[] = [];
        let pricedAt = now; // the instant the price covers from
        if (byProduct) {
          const [t] = await tx<
            { id: string; name: string; kind: string; currency: string; price: string | null }[]
          >`
            select p.id, p.name, p.kind, p.currency, pp.price from products p
            left join product_prices pp on pp.product_id = p.id and pp.cycle = ${s.cycle} where p.id = ${req.toProductId} and p.active`;
          if (!t)
            throw apiError("NOT_FOUND", "Product not found", {
              violations: [{ field: "toProductId", message: "no such product" }],
            });
          if (t.currency !== s.currency) throw currencyMismatch(t.currency, s.currency, "toProductId");
          if (t.kind !== s.kind || t.id === s.product_id || t.price === null) {
            throw badRequest("toProductId", "this product is not an upgrade path for the service");
          }
          // A live quote's amount, priced from the quote's instant; else priced now.
          const price = await upgradePrice(
            tx,
            {
              serviceId: s.id,
              toProductId: t.id,
              cycle: s.cycle,
              serviceAmount: money(s.amount),
              targetPrice: money(t.price),
              pricedUntil: s.next_due_date,
            },
            now,
          );
          pricedAt = price.pricedAt;
          const diff = price.amount;
          charge = diff > 0n ? diff : 0n;
          credit = diff < 0n ? -diff : 0n;
          description = `Upgrade ${s.product_name} → ${t.name} until ${until}`;
        } else {
          const options = await tx<
            OptionRow[]
          >`select * from product_options where product_id = ${s.product_id}
            and id in ${tx([...req.addOptions, ...req.removeOptions])}`;
          const find = (optionId: string) => options.find((o) => o.id === optionId);
          const missing = [...req.addOptions, ...req.removeOptions].find((o) => !find(o));
          if (missing) throw apiError("NOT_FOUND", `Option ${missing} is not offered for this product`);
          const held = await tx.unsafe<AddonRow[]>(
            `${addonSelect} where a.service_id = $1 and a.status <> 'cancelled' order by a.started_at for update of a`,
            [s.id],
            prepared,
          );
          const already = req.addOptions.find((o) => held.some((h) => h.option_id === o));
          if (already) throw badRequest("addOptions", `option ${already} is already held`);
          const notHeld = req.removeOptions.find((o) => !held.some((h) => h.option_id === o));
          if (notHeld) throw badRequest("removeOptions", `option ${notHeld} is not held`);
          const notRecurring = req.addOptions.find((o) => find(o)!.recurring_price === null);
          if (notRecurring)
            throw badRequest("addOptions", `option ${notRecurring} is not offered as a recurring add-on`);
          removed = held.filter((h) => req.removeOptions.includes(h.option_id));
          // Each addition is prorated to the service's paid-up date at the service's cycle price;
          // each removal is worth the unused share of what was actually paid for it.
          charge = (await optionCharges(tx, req.addOptions, s.cycle, share)).reduce((a, b) => a + b, 0n);
          credit = 0n;
          for (const a of removed) credit += await addonValue(tx, a, now);
          description = `Option changes on ${s.name} until ${until}`;
        }
        const amount = charge - credit;
        // Nets to zero or a credit: completed at once, no document.
        const atOnce = amount <= 0n;
        let documentId: string | null = null;
        let orderId: string | null = null;
        if (!byProduct) {
          // Removals take effect now; their credit goes back to whoever paid for them, less what
          // the additions cost when the change is settled at once (the additions are then paid
          // for by what was given up).
          await endAddons(tx, removed, now, { refund: false, why: "option removed" });
          const funding = [...new Set(removed.flatMap((a) => a.funding_documents))];
          const back = atOnce ? credit - charge : credit;
          if (back > 0n) await refundPayments(tx, funding, back, `${description}: removed options returned`);
          if (atOnce && charge > 0n) {
            await addOptions(
              tx,
              s,
              req.addOptions,
              await optionCharges(tx, req.addOptions, s.cycle, share),
              now,
              funding,
            );
          }
        } else if (atOnce && credit > 0n) {
          // A downgrade returns the unused difference to whoever paid for the service's time.
          await refundPayments(
            tx,
            await serviceDocuments(tx, s.id),
            credit,
            `${description}: difference returned`,
          );
        }
        if (!atOnce) {
          orderId = newId();
          await tx`insert into orders (id, order_number, customer_id, person_id, total, currency, payment_mode, created_at)
            values (${orderId}, 'ORD-' || nextval('order_numbers'), ${caller.customerId}, ${caller.personId}, ${formatMoney(charge)}, ${s.currency}, 'credit', ${now})`;
          // Credit is never applied to an upgrade automatically: the invoice waits for a payment.
          const invoice = await createDocument(tx, {
            kind: "invoice",
            customerId: caller.customerId,
            personId: caller.personId,
            currency: s.currency,
            purpose: "upgrade",
            serviceId: s.id,
            orderId,
            lines: [{ description, amount: charge, serviceId: s.id }],
          });
          documentId = invoice.id;
        }
        await tx`insert into upgrades (id, service_id, customer_id, person_id, kind, from_product_id, to_product_id, add_options,
                                       remove_options, amount, credit, status, document_id, order_id, priced_until, created_at,
                                       priced_at)
          values (${id}, ${s.id}, ${caller.customerId}, ${caller.personId}, ${byProduct ? "product" : "options"}, ${s.product_id},
                  ${byProduct ? req.toProductId : null}, ${req.addOptions}, ${req.removeOptions}, ${formatMoney(amount)},
                  ${formatMoney(credit)}, ${atOnce ? "executing" : "awaiting_payment"}, ${documentId}, ${orderId}, ${s.next_due_date},
                  ${now}, ${pricedAt})`;
        if (atOnce) {
          const [u] = await tx<UpgradeRow[]>`select * from upgrades where id = ${id}`;
          await applyUpgrade(tx, ns, u, { optionsDone: true });
        }
        const [final] = await tx<UpgradeRow[]>`select * from upgrades where id = ${id}`;
        const result = create(RequestUpgradeResponseSchema, { upgrade: upgradeOut(final, s.currency) });
        await remember(
          tx,
          caller.personId,
          `upgrade:${req.serviceId}`,
          req.idempotencyKey,
          req.requestHash,
          toJsonString(RequestUpgradeResponseSchema, result),
        );
        return result;
      });
      return out;
    },

    async getUpgrade(req) {
      const caller = callerOf(req.caller);
      const [u] = await sql<
        UpgradeRow[]
      >`select * from upgrades where id = ${req.upgradeId} and customer_id = ${caller.customerId}`;
      if (!u) throw notFound("Upgrade");
      return { upgrade: upgradeOut(u, await serviceCurrency(sql, u.service_id)) };
    },

    async cancelUpgrade(req) {
      const caller = callerOf(req.caller);
      const upgradeId = req.upgradeId;
      return transact(sql, async (tx) => {
        const [peek] = await tx<
          UpgradeRow[]
        >`select * from upgrades where id = ${upgradeId} and customer_id = ${caller.customerId}`;
        if (!peek) throw notFound("Upgrade");
        // Same lock order as paying its invoice (document, then upgrade), so the two cannot deadlock.
        if (peek.document_id) await tx`select 1 from documents where id = ${peek.document_id} for update`;
        const [u] = await tx<UpgradeRow[]>`select * from upgrades where id = ${upgradeId} for update`;
        if (u.status !== "awaiting_payment")
          throw apiError("CONFLICT", `The upgrade is ${u.status} and can no longer be cancelled`);
        await tx`update upgrades set status = 'cancelled' where id = ${u.id}`;
        if (u.document_id) await cancelDocument(tx, u.document_id, "upgrade cancelled");
        if (u.order_id) await tx`update orders set status = 'cancelled' where id = ${u.order_id}`;
        const [final] = await tx<UpgradeRow[]>`select * from upgrades where id = ${u.id}`;
        return { upgrade: upgradeOut(final, await serviceCurrency(tx, u.service_id)) };
      });
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

/** The add-ons a service holds (not cancelled), oldest first. */
const heldAddons = (db: Sql, serviceId: string) =>
  db.unsafe<AddonRow[]>(
    `${addonSelect} where a.service_id = $1 and a.status <> 'cancelled' order by a.started_at`,
    [serviceId],
    prepared,
  );

/** Whether an upgrade of the service still waits for its invoice to be paid. */
async function upgradeAwaitingPayment(tx: TxSql, serviceId: string): Promise<boolean> {
  const rows =
    await tx`select 1 from upgrades where service_id = ${serviceId} and status = 'awaiting_payment'`;
  return rows.length > 0;
}

/** A paid add-on or upgrade invoice puts its change into effect (registered below). */
async function onAddonOrUpgradePaid(tx: TxSql, ns: string, doc: DocumentRow) {
  const now = clock.now();
  if (doc.purpose === "addon") {
    // The add-on's own cycle starts when it is paid; what was paid is what it can give back.
    const rows = await tx<{ id: string; cycle: string; billing_type: string }[]>`
      select id, cycle, billing_type from service_addons where document_id = ${doc.id} and status = 'pending_payment' for update`;
    for (const a of rows) {
      await tx`update service_addons set status = 'active', paid_amount = amount, period_start = ${now}, started_at = ${now},
        next_due_date = ${a.billing_type === "recurring" ? addCycle(now, a.cycle) : null}, funding_documents = ${[doc.id]}
        where id = ${a.id}`;
    }
  }
  if (doc.purpose === "upgrade") {
    const [u] = await tx<
      UpgradeRow[]
    >`select * from upgrades where document_id = ${doc.id} and status = 'awaiting_payment' for update`;
    if (!u) return;
    await applyUpgrade(tx, ns, u, { optionsDone: false, fundedBy: doc });
    if (u.order_id)
      await tx`update orders set payment_status = 'paid', status = 'active' where id = ${u.order_id}`;
  }
}

/**
 * Adds recurring options to a service, paid up to the service's paid-up date: each holds what was
 * paid for it (`paid`, in the same order), for the period from `from` (the instant it was priced
 * from) to that date, so giving it up returns the unused share of exactly that.
 */
async function addOptions(
  tx: TxSql,
  s: ServiceRow,
  optionIds: string[],
  paid: Units[],
  from: Date,
  funding: string[],
) {
  for (const [i, optionId] of optionIds.entries()) {
    const [o] = await tx<OptionRow[]>`select * from product_options where id = ${optionId}`;
    const price = cyclePrice(money(o.recurring_price ?? "0"), s.cycle);
    await tx`insert into service_addons (id, service_id, option_id, billing_type, cycle, quantity, amount, status, next_due_date,
                                         paid_amount, period_start, started_at, funding_documents)
      values (${newId()}, ${s.id}, ${optionId}, 'recurring', ${s.cycle}, 1, ${formatMoney(price)}, 'active', ${s.next_due_date},
              ${formatMoney(paid[i] ?? 0n)}, ${from}, ${clock.now()}, ${funding})`;
  }
}

/** `total` split over `weights` in proportion, rounded down, the rest to the last. */
function splitByWeight(total: Units, weights: Units[]): Units[] {
  const sum = weights.reduce((a, b) => a + b, 0n);
  if (sum === 0n) return weights.map((_, i) => (i === weights.length - 1 ? total : 0n));
  const parts = weights.map((w) => (total * w) / sum);
  parts[parts.length - 1] += total - parts.reduce((a, b) => a + b, 0n);
  return parts;
}

/**
 * Puts an upgrade into effect: awaiting_payment → executing → completed. A new product price also
 * re-prices a renewal invoice still open on the service, so paying it charges the new price.
 */
async function applyUpgrade(
  tx: TxSql,
  ns: string,
  u: UpgradeRow,
  o: { optionsDone: boolean; fundedBy?: DocumentRow },
) {
  await tx`update upgrades set status = 'executing' where id = ${u.id}`;
  const [s] = await selectServices(tx, "s.id = $1 for update of s", [u.service_id]);
  const now = clock.now();
  if (u.kind === "product" && u.to_product_id) {
    const [price] = await tx<{ price: string; name: string }[]>`
      select pp.price, p.name from product_prices pp join products p on p.id = pp.product_id
      where pp.product_id = ${u.to_product_id} and pp.cycle = ${s.cycle}`;
    await tx`update services set product_id = ${u.to_product_id}, amount = ${price.price} where id = ${u.service_id}`;
    await repriceOpenRenewals(tx, ns, s, { price: money(price.price), plan: price.name });
  } else if (!o.optionsDone) {
    // Removals already took effect when the upgrade was requested. The additions hold what the
    // invoice charged (held from the request, or re-priced to the time left when paid late:
    // upgrade-pricing.ts), split by their prices, for the period that price covers.
    const from = pricedFrom(u.priced_at ?? u.created_at, now);
    const weights = await optionCharges(tx, u.add_options, s.cycle, 1_000_000n);
    const paid = o.fundedBy ? splitByWeight(money(o.fundedBy.total), weights) : weights.map(() => 0n);
    await addOptions(tx, s, u.add_options, paid, from, o.fundedBy ? [o.fundedBy.id] : []);
  }
  await tx`update upgrades set status = 'completed', completed_at = ${now} where id = ${u.id}`;
}

/**
 * Open renewal invoices of a service follow its current plan: the price, and the line's text,
 * which names the plan the term is now on (its dates kept).
 */
async function repriceOpenRenewals(
  tx: TxSql,
  ns: string,
  s: ServiceRow,
  plan: { price: Units; plan: string },
) {
  const { price } = plan;
  const open = await tx<DocumentRow[]>`
    select * from documents where service_id = ${s.id} and purpose = 'renewal' and status = 'unpaid' for update`;
  for (const d of open) {
    const paid = money(d.amount_paid);
    const total = max(price, paid);
    const [line] = await tx<{ description: string }[]>`
      select description from document_lines where document_id = ${d.id} order by id limit 1`;
    // "Renewal of <name> (<cycle>) <from> – <to>": the term's dates stay, the plan is the new one.
    const term = line?.description.match(/\(\w+\) (\S+ – \S+)$/)?.[1];
    const description = `Renewal of ${s.name} on ${plan.plan} (${s.cycle})${term ? ` ${term}` : ""}`;
    await tx`update document_lines set amount = ${formatMoney(price)}, description = ${description}
      where document_id = ${d.id}`;
    await tx`update documents set total = ${formatMoney(total)} where id = ${d.id}`;
    if (paid > price) {
      // Already part-paid beyond the new price: the renewal is settled and the excess goes back.
      await refundPayments(tx, [d.id], paid - price, `Renewal ${d.number} re-priced after a downgrade`);
      await tx`update documents set total = ${formatMoney(price)}, amount_paid = ${formatMoney(price)} where id = ${d.id}`;
    }
    if (paid >= price) {
      const [settled] = await tx<DocumentRow[]>`
        update documents set status = 'paid', paid_at = ${clock.now()} where id = ${d.id} returning *`;
      await dispatchPaid(tx, ns, settled);
    }
  }
}

onDocumentPaid("addon", onAddonOrUpgradePaid);
onDocumentPaid("upgrade", onAddonOrUpgradePaid);
