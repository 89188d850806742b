import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "@hb/contracts/billing/v1/billing_pb";
import { apiError, badRequest, isUuid, newId, notFound, type Sql, type TxSql } from "@hb/platform";
import { createDocument, payFromCredit } from "./documents.ts";
import { remember, replay } from "./idempotency.ts";
import { balanceOf, lockBalance, move } from "./ledger.ts";
import {
  addCycle,
  CYCLE_MONTHS,
  formatMoney,
  isCycle,
  money,
  parseMoney,
  toNumber,
  type Units,
} from "./money.ts";
import { prorate, remainingShare } from "./proration.ts";
import { type DocumentRow, documentJson, type ServiceRow, selectServices } from "./records.ts";
import { ownService } from "./service-handlers.ts";
import { callerOf, json, requireUuid } from "./shared.ts";

interface OptionRow {
  id: string;
  product_id: string;
  name: string;
  recurring_price: string | null;
  one_time_price: string | null;
}
interface AddonRow {
  id: string;
  option_id: string;
  name: string;
  billing_type: string;
  cycle: string;
  quantity: number;
  amount: string;
  status: string;
  started_at: Date;
  next_due_date: Date | null;
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
  created_at: Date;
  completed_at: Date | null;
}

const addonJson = (a: AddonRow) => ({
  id: a.id,
  option_id: a.option_id,
  name: a.name,
  billing_type: a.billing_type,
  billing_cycle: a.cycle,
  quantity: a.quantity,
  amount: formatMoney(money(a.amount)),
  status: a.status,
  started_at: a.started_at.toISOString(),
  next_due_date: a.next_due_date?.toISOString() ?? null,
});

/** Price of `cycle` for an option priced per month. */
const cyclePrice = (monthly: Units, cycle: string) => monthly * BigInt(CYCLE_MONTHS[cycle] ?? 1);

function assertChangeable(s: ServiceRow) {
  if (s.status !== "active")
    throw apiError("CONFLICT", `Add-ons and upgrades need an active service (this one is ${s.status})`);
}

export function createAddonsUpgrades(sql: Sql, ns: string): Partial<ServiceImpl<typeof BillingService>> {
  const upgradeJson = async (db: Sql | TxSql, u: UpgradeRow) => {
    const [doc] = u.document_id
      ? await db<DocumentRow[]>`select * from documents where id = ${u.document_id}`
      : [];
    return {
      id: u.id,
      service_id: u.service_id,
      type: u.kind,
      status: u.status,
      from_product_id: u.from_product_id,
      to_product_id: u.to_product_id,
      add_options: u.add_options,
      remove_options: u.remove_options,
      amount: toNumber(money(u.amount)),
      document: doc ? documentJson(doc) : null,
      order_id: u.order_id,
      created_at: u.created_at.toISOString(),
      completed_at: u.completed_at?.toISOString() ?? null,
    };
  };

  return {
    async listAddons(req) {
      const caller = callerOf(req.caller);
      const s = await ownService(sql, caller.customerId, req.serviceId);
      const active = await sql<AddonRow[]>`
        select a.*, o.name from service_addons a join product_options o on o.id = a.option_id
        where a.service_id = ${s.id} and a.status <> 'cancelled' order by a.started_at`;
      if (!req.available) return json({ options: active.map(addonJson) });
      const offered = await sql<
        OptionRow[]
      >`select * from product_options where product_id = ${s.product_id} order by name`;
      return json({
        options: offered.map((o) => ({
          id: o.id,
          name: o.name,
          prices: {
            recurring: o.recurring_price
              ? Object.fromEntries(
                  Object.keys(CYCLE_MONTHS).map((c) => [
                    c,
                    toNumber(cyclePrice(money(o.recurring_price!), c)),
                  ]),
                )
              : null,
            one_time: o.one_time_price ? toNumber(money(o.one_time_price)) : null,
          },
          held: active.some((a) => a.option_id === o.id && a.status === "active"),
        })),
      });
    },

    async buyAddon(req) {
      const caller = callerOf(req.caller);
      if (!isUuid(req.optionId)) throw badRequest("optionId", "optionId is not a valid identifier");
      if (req.billingType !== "one_time" && req.billingType !== "recurring")
        throw badRequest("billingType", "billingType must be one_time or recurring");
      const cycle = req.billingType === "recurring" ? req.billingCycle || "monthly" : "one_time";
      if (req.billingType === "recurring" && !isCycle(cycle))
        throw badRequest("billingCycle", `unknown billingCycle "${cycle}"`);
      const quantity = req.quantity || 1;
      if (quantity < 1 || quantity > 100) throw badRequest("quantity", "quantity must be from 1 to 100");
      const out = await sql.begin(async (tx) => {
        const again = await replay(
          tx,
          caller.personId,
          `addon:${req.serviceId}`,
          req.idempotencyKey,
          req.requestHash,
        );
        if (again) return again;
        const s = await ownService(tx, caller.customerId, req.serviceId, true);
        assertChangeable(s);
        const [o] = await tx<
          OptionRow[]
        >`select * from product_options where id = ${req.optionId} and product_id = ${s.product_id}`;
        if (!o)
          throw apiError("NOT_FOUND", "This product offers no such add-on", {
            violations: [{ field: "optionId", message: "not offered" }],
          });
        const unit = req.billingType === "recurring" ? o.recurring_price : o.one_time_price;
        if (unit === null)
          throw badRequest("billingType", `This add-on is not offered as ${req.billingType}`);
        // A full cycle is charged and the add-on's own cycle starts today.
        const amount =
          (req.billingType === "recurring" ? cyclePrice(money(unit), cycle) : money(unit)) * BigInt(quantity);
        const invoice = await createDocument(tx, {
          kind: "invoice",
          customerId: s.customer_id,
          personId: caller.personId,
          currency: s.currency,
          purpose: "addon",
          serviceId: s.id,
          lines: [{ description: `${o.name} × ${quantity} (${cycle})`, amount, serviceId: s.id }],
        });
        const addonId = newId();
        await tx`insert into service_addons (id, service_id, option_id, billing_type, cycle, quantity, amount, status, document_id, next_due_date)
          values (${addonId}, ${s.id}, ${o.id}, ${req.billingType}, ${cycle}, ${quantity}, ${formatMoney(amount)}, 'pending_payment',
                  ${invoice.id}, ${req.billingType === "recurring" ? addCycle(new Date(), cycle) : null})`;
        const balance = await lockBalance(tx, caller.personId, caller.customerId, s.currency);
        let settled = false;
        if (balance >= amount) {
          await payFromCredit(tx, ns, invoice.id, caller, undefined);
          settled = true;
        }
        const [addon] = await tx<
          AddonRow[]
        >`select a.*, o.name from service_addons a join product_options o on o.id = a.option_id where a.id = ${addonId}`;
        const [doc] = await tx<DocumentRow[]>`select * from documents where id = ${invoice.id}`;
        const result = JSON.stringify({
          addon: addonJson(addon),
          invoice: documentJson(doc),
          settled,
          credit_balance: toNumber(await balanceOf(tx, caller.personId)),
        });
        await remember(
          tx,
          caller.personId,
          `addon:${req.serviceId}`,
          req.idempotencyKey,
          req.requestHash,
          result,
        );
        return result;
      });
      return { result: { json: out } };
    },

    async cancelAddon(req) {
      const caller = callerOf(req.caller);
      if (!isUuid(req.optionId)) throw badRequest("optionId", "optionId is not a valid identifier");
      const s = await ownService(sql, caller.customerId, req.serviceId);
      const rows = await sql<{ id: string }[]>`
        update service_addons set status = 'cancelled', cancelled_at = clock_timestamp()
        where service_id = ${s.id} and option_id = ${req.optionId} and status <> 'cancelled' returning id`;
      if (rows.length === 0) throw notFound("Active add-on");
      return json({ option_id: req.optionId, status: "cancelled", cancelled: rows.length });
    },

    async listUpgradePaths(req) {
      const caller = callerOf(req.caller);
      const s = await ownService(sql, caller.customerId, req.serviceId);
      const share = remainingShare(s.next_due_date, s.cycle, new Date());
      const targets = await sql<{ id: string; name: string; price: string }[]>`
        select p.id, p.name, pp.price from products p join product_prices pp on pp.product_id = p.id and pp.cycle = ${s.cycle}
        where p.kind = ${s.kind} and p.active and p.id <> ${s.product_id} order by pp.price`;
      const [pending] = await sql<
        UpgradeRow[]
      >`select * from upgrades where service_id = ${s.id} and status in ('awaiting_payment', 'executing')`;
      return json({
        current: {
          product_id: s.product_id,
          name: s.product_name,
          amount: formatMoney(money(s.amount)),
          cycle: s.cycle,
        },
        paths: targets.map((t) => {
          const due = prorate(money(s.amount), money(t.price), share);
          return {
            product_id: t.id,
            name: t.name,
            price: formatMoney(money(t.price)),
            cycle: s.cycle,
            prorated_amount: toNumber(due),
            next_due_date: s.next_due_date.toISOString(),
          };
        }),
        pending_upgrade: pending ? await upgradeJson(sql, pending) : null,
      });
    },

    async requestUpgrade(req) {
      const caller = callerOf(req.caller);
      const byProduct = req.toProductId !== "";
      if (byProduct && !isUuid(req.toProductId))
        throw badRequest("toProductId", "toProductId is not a valid identifier");
      if (!byProduct) {
        if (req.addOptions.length === 0 && req.removeOptions.length === 0) {
          throw badRequest("addOptions", "addOptions or removeOptions must name at least one option");
        }
        const overlap = req.addOptions.find((o) => req.removeOptions.includes(o));
        if (overlap) throw badRequest("removeOptions", `option ${overlap} is both added and removed`);
        const bad = [...req.addOptions, ...req.removeOptions].find((o) => !isUuid(o));
        if (bad) throw badRequest("addOptions", `"${bad}" is not a valid option identifier`);
      }
      const out = await sql.begin(async (tx) => {
        const again = await replay(
          tx,
          caller.personId,
          `upgrade:${req.serviceId}`,
          req.idempotencyKey,
          req.requestHash,
        );
        if (again) return again;
        const s = await ownService(tx, caller.customerId, req.serviceId, true);
        assertChangeable(s);
        const [pending] =
          await tx`select 1 from upgrades where service_id = ${s.id} and status = 'awaiting_payment'`;
        if (pending)
          throw apiError(
            "CONFLICT",
            "An upgrade is already awaiting payment for this service; pay or cancel it first",
          );
        const share = remainingShare(s.next_due_date, s.cycle, new Date());
        let amount: Units;
        let description: string;
        if (byProduct) {
          const [t] = await tx<{ id: string; name: string; kind: string; price: string | null }[]>`
            select p.id, p.name, p.kind, pp.price from products p
            left join product_prices pp on pp.product_id = p.id and pp.cycle = ${s.cycle} where p.id = ${req.toProductId} and p.active`;
          if (!t)
            throw apiError("NOT_FOUND", "Product not found", {
              violations: [{ field: "toProductId", message: "no such product" }],
            });
          if (t.kind !== s.kind || t.id === s.product_id || t.price === null) {
            throw badRequest("toProductId", "this product is not an upgrade path for the service");
          }
          amount = prorate(money(s.amount), money(t.price), share);
          description = `Upgrade ${s.product_name} → ${t.name} until ${s.next_due_date.toISOString().slice(0, 10)}`;
        } else {
          const options = await tx<
            OptionRow[]
          >`select * from product_options where product_id = ${s.product_id}
            and id in ${tx([...req.addOptions, ...req.removeOptions])}`;
          const find = (id: string) => options.find((o) => o.id === id);
          const missing = [...req.addOptions, ...req.removeOptions].find((id) => !find(id));
          if (missing) throw apiError("NOT_FOUND", `Option ${missing} is not offered for this product`);
          const held = await tx<
            { option_id: string }[]
          >`select option_id from service_addons where service_id = ${s.id} and status = 'active'`;
          const heldIds = held.map((h) => h.option_id);
          const already = req.addOptions.find((id) => heldIds.includes(id));
          if (already) throw badRequest("addOptions", `option ${already} is already held`);
          const notHeld = req.removeOptions.find((id) => !heldIds.includes(id));
          if (notHeld) throw badRequest("removeOptions", `option ${notHeld} is not held`);
          const monthly = (ids: string[]) =>
            ids.reduce((sum, id) => sum + cyclePrice(money(find(id)!.recurring_price ?? "0"), s.cycle), 0n);
          // Prorated and aligned to the service's next due date.
          amount = prorate(monthly(req.removeOptions), monthly(req.addOptions), share);
          description = `Option changes on ${s.name} until ${s.next_due_date.toISOString().slice(0, 10)}`;
        }
        const id = newId();
        const status = amount <= 0n ? "executing" : "awaiting_payment";
        let documentId: string | null = null;
        let orderId: string | null = null;
        if (amount > 0n) {
          orderId = newId();
          await tx`insert into orders (id, order_number, customer_id, person_id, total, currency, payment_mode)
            values (${orderId}, 'ORD-' || nextval('order_numbers'), ${caller.customerId}, ${caller.personId}, ${formatMoney(amount)}, ${s.currency}, 'credit')`;
          // Credit is never applied to an upgrade automatically: the invoice waits for a payment.
          const invoice = await createDocument(tx, {
            kind: "invoice",
            customerId: caller.customerId,
            personId: caller.personId,
            currency: s.currency,
            purpose: "upgrade",
            serviceId: s.id,
            orderId,
            lines: [{ description, amount, serviceId: s.id }],
          });
          documentId = invoice.id;
        }
        await tx`insert into upgrades (id, service_id, customer_id, person_id, kind, from_product_id, to_product_id, add_options,
                                       remove_options, amount, status, document_id, order_id)
          values (${id}, ${s.id}, ${caller.customerId}, ${caller.personId}, ${byProduct ? "product" : "options"}, ${s.product_id},
                  ${byProduct ? req.toProductId : null}, ${req.addOptions}, ${req.removeOptions}, ${formatMoney(amount)}, ${status},
                  ${documentId}, ${orderId})`;
        const [u] = await tx<UpgradeRow[]>`select * from upgrades where id = ${id}`;
        if (amount <= 0n) {
          // Nets to zero or a credit: completed at once, no document; a credit goes to the balance.
          if (amount < 0n) {
            await lockBalance(tx, caller.personId, caller.customerId, s.currency);
            await move(tx, {
              personId: caller.personId,
              customerId: caller.customerId,
              amount: -amount,
              kind: "upgrade_credit",
              description,
            });
          }
          await applyUpgrade(tx, u);
        }
        const [final] = await tx<UpgradeRow[]>`select * from upgrades where id = ${id}`;
        const result = JSON.stringify(await upgradeJson(tx, final));
        await remember(
          tx,
          caller.personId,
          `upgrade:${req.serviceId}`,
          req.idempotencyKey,
          req.requestHash,
          result,
        );
        return result;
      });
      return { result: { json: out } };
    },

    async getUpgrade(req) {
      const caller = callerOf(req.caller);
      const [u] = await sql<
        UpgradeRow[]
      >`select * from upgrades where id = ${requireUuid("id", req.upgradeId)} and customer_id = ${caller.customerId}`;
      if (!u) throw notFound("Upgrade");
      const out = await upgradeJson(sql, u);
      const [order] = u.order_id
        ? await sql`select id, order_number, status, payment_status from orders where id = ${u.order_id}`
        : [];
      return json({ ...out, order: order ?? null });
    },

    async cancelUpgrade(req) {
      const caller = callerOf(req.caller);
      return sql.begin(async (tx) => {
        const [u] = await tx<
          UpgradeRow[]
        >`select * from upgrades where id = ${requireUuid("id", req.upgradeId)}
          and customer_id = ${caller.customerId} for update`;
        if (!u) throw notFound("Upgrade");
        if (u.status !== "awaiting_payment")
          throw apiError("CONFLICT", `The upgrade is ${u.status} and can no longer be cancelled`);
        await tx`update upgrades set status = 'cancelled' where id = ${u.id}`;
        if (u.document_id)
          await tx`update documents set status = 'cancelled' where id = ${u.document_id} and status = 'unpaid'`;
        if (u.order_id) await tx`update orders set status = 'cancelled' where id = ${u.order_id}`;
        const [final] = await tx<UpgradeRow[]>`select * from upgrades where id = ${u.id}`;
        return json(await upgradeJson(tx, final));
      });
    },

    async adminAddProductOption(req) {
      const [p] = await sql`select 1 from products where id = ${requireUuid("product_id", req.productId)}`;
      if (!p) throw notFound("Product");
      const recurring = req.recurringPrice ? parseMoney(req.recurringPrice) : null;
      const oneTime = req.oneTimePrice ? parseMoney(req.oneTimePrice) : null;
      if (recurring === undefined || oneTime === undefined || (recurring === null && oneTime === null)) {
        throw badRequest("recurring_price", "give a recurring (per month) and/or one-time price");
      }
      const id = newId();
      await sql`insert into product_options (id, product_id, name, recurring_price, one_time_price)
        values (${id}, ${req.productId}, ${req.name.trim() || "Option"}, ${recurring === null ? null : formatMoney(recurring)},
                ${oneTime === null ? null : formatMoney(oneTime)})`;
      return { option: { json: JSON.stringify({ id, product_id: req.productId, name: req.name }) } };
    },
  };
}

/** A paid add-on or upgrade invoice puts its change into effect (called from documents.onPaid). */
export async function onAddonOrUpgradePaid(tx: TxSql, doc: DocumentRow) {
  if (doc.purpose === "addon") {
    await tx`update service_addons set status = 'active' where document_id = ${doc.id} and status = 'pending_payment'`;
  }
  if (doc.purpose === "upgrade") {
    const [u] = await tx<
      UpgradeRow[]
    >`select * from upgrades where document_id = ${doc.id} and status = 'awaiting_payment' for update`;
    if (!u) return;
    await applyUpgrade(tx, u);
    if (u.order_id)
      await tx`update orders set payment_status = 'paid', status = 'active' where id = ${u.order_id}`;
  }
}

/** Puts an upgrade into effect: awaiting_payment → executing → completed. */
async function applyUpgrade(tx: TxSql, u: UpgradeRow) {
  await tx`update upgrades set status = 'executing' where id = ${u.id}`;
  const [s] = await selectServices(tx, "s.id = $1", [u.service_id]);
  if (u.kind === "product" && u.to_product_id) {
    const [price] = await tx<
      { price: string }[]
    >`select price from product_prices where product_id = ${u.to_product_id} and cycle = ${s.cycle}`;
    await tx`update services set product_id = ${u.to_product_id}, amount = ${price.price} where id = ${u.service_id}`;
  } else {
    if (u.remove_options.length) {
      await tx`update service_addons set status = 'cancelled', cancelled_at = clock_timestamp()
        where service_id = ${u.service_id} and option_id in ${tx(u.remove_options)} and status = 'active'`;
    }
    for (const optionId of u.add_options) {
      const [o] = await tx<OptionRow[]>`select * from product_options where id = ${optionId}`;
      await tx`insert into service_addons (id, service_id, option_id, billing_type, cycle, quantity, amount, status, next_due_date)
        values (${newId()}, ${u.service_id}, ${optionId}, 'recurring', ${s.cycle}, 1,
                ${formatMoney(cyclePrice(money(o.recurring_price ?? "0"), s.cycle))}, 'active', ${s.next_due_date})`;
    }
  }
  await tx`update upgrades set status = 'completed', completed_at = clock_timestamp() where id = ${u.id}`;
}
