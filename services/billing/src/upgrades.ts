/**
 * Upgrades of a service (BillingService's upgrade calls): the paths a service may take with
 * their quotes, requesting one (to another product, or adding and removing options; settled at
 * once when it nets to a credit, else an invoice that waits for payment), reading and cancelling
 * one. A paid upgrade invoice puts it into effect (addon-upgrade-paid.ts).
 */

import { create, fromJsonString, type MessageInitShape, toJsonString } from "@bufbuild/protobuf";
import { RequestUpgradeResponseSchema } from "@hb/contracts/hb/billing/v1/billing_pb";
import type { UpgradeSchema } from "@hb/contracts/hb/billing/v1/upgrades_pb";
import { apiError, badRequest, newId, notFound, prepared, type Sql, type TxSql } from "@hb/platform";
import { currencyMismatch } from "./account-currency.ts";
import { addOptions, applyUpgrade } from "./addon-upgrade-paid.ts";
import { clock } from "./clock.ts";
import { moneyOut, timeOut } from "./contract-values.ts";
import { createDocument } from "./documents.ts";
import { billingCycle, upgradeKind, upgradeStatus } from "./enums.ts";
import type { BillingHandlers } from "./handlers.ts";
import { remember, replay } from "./idempotency.ts";
import { refundPayments } from "./ledger.ts";
import { formatMoney, money, type Units } from "./money.ts";
import { remainingShare } from "./proration.ts";
import type { OptionRow, UpgradeRow } from "./records.ts";
import {
  type AddonRow,
  addonSelect,
  addonValue,
  cancelDocument,
  endAddons,
  serviceDocuments,
} from "./refunds.ts";
import { isOverdue } from "./renewals.ts";
import { assertChangeable, ownService } from "./service-state.ts";
import { callerOf, transact } from "./shared.ts";
import { optionCharges, quoteUpgrade, upgradePrice } from "./upgrade-pricing.ts";

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

/** Whether an upgrade of the service still waits for its invoice to be paid. */
async function upgradeAwaitingPayment(tx: TxSql, serviceId: string): Promise<boolean> {
  const rows =
    await tx`select 1 from upgrades where service_id = ${serviceId} and status = 'awaiting_payment'`;
  return rows.length > 0;
}

export function createUpgrades(sql: Sql, ns: string): BillingHandlers {
  /** The currency of the service an upgrade changes (the account's when it was ordered). */
  const serviceCurrency = async (db: Sql | TxSql, serviceId: string) =>
    (await db<{ currency: string }[]>`select currency from services where id = ${serviceId}`)[0].currency;

  return {
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
              anchorDay: s.anchor_day ?? undefined,
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
        const share = remainingShare(s.next_due_date, s.cycle, now, s.anchor_day ?? undefined);
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
              anchorDay: s.anchor_day ?? undefined,
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
  };
}
