import { create, fromJsonString, toJsonString } from "@bufbuild/protobuf";
import { type OrderItem, type PlacedOrder, PlacedOrderSchema } from "@hb/contracts/hb/billing/v1/orders_pb";
import { apiError, badRequest, isUuid, newId, notFound, type Sql, type TxSql } from "@hb/platform";
import { clock } from "./clock.ts";
import { moneyOut } from "./contract-values.ts";
import {
  createAndPayFromCredit,
  createDocument,
  type NewDocument,
  payNewDocumentFromCredit,
} from "./documents.ts";
import { billingCycle, orderPaymentStatus, orderStatus } from "./enums.ts";
import { orderEvent } from "./events.ts";
import type { BillingHandlers } from "./handlers.ts";
import { remember, replay } from "./idempotency.ts";
import { balanceOf, currencyMismatch, lockBalance, lockedBalance, move } from "./ledger.ts";
import { addCycle, formatMoney, HOURLY, money, toNumber, type Units } from "./money.ts";
import { type DocumentRow, type OrderRow, selectServices, summaryOut } from "./records.ts";
import { documentOut, orderOut } from "./records-out.ts";
import { callerOf, page, transact } from "./shared.ts";

export const MAX_ORDER_ITEMS = 50;

interface PricedItem {
  item: OrderItem;
  /** The item's cycle as billing stores it. */
  cycle: string;
  productId: string;
  productName: string;
  kind: string;
  price: Units;
  currency: string;
  minCredit: Units;
}

export interface OrderContext {
  customerId: string;
  personId: string;
  partnerId?: string;
  externalOrderId?: string;
  externalCustomerId?: string;
  /** credit: settle from the payer's balance when it covers the total; invoice: raise a document only. */
  paymentMode: "credit" | "invoice";
}

/**
 * Validates the items against the catalogue and prices them. Every item must be priced in the
 * account's currency (`currency`; empty only for internal callers, which then get the products' own).
 * One statement reads every item's product; the first item at fault, in the order sent, is the
 * one refused.
 */
export async function priceItems(
  db: Sql | TxSql,
  items: OrderItem[],
  currency: string,
): Promise<PricedItem[]> {
  if (items.length === 0) throw badRequest("items", "an order needs productId and billingCycle, or items");
  if (items.length > MAX_ORDER_ITEMS) throw badRequest("items", `at most ${MAX_ORDER_ITEMS} items per order`);
  const cycles = items.map((item) => {
    const cycle = billingCycle.in(item.billingCycle);
    return cycle === "one_time" ? undefined : cycle;
  });
  const readable = items.map((item, i) => isUuid(item.productId) && cycles[i] !== undefined);
  const rows = await db<
    {
      n: number;
      id: string | null;
      name: string;
      kind: string;
      currency: string;
      os_images: string[];
      price: string | null;
      min_credit: string;
    }[]
  >`
    select i.n::int as n, p.id, p.name, p.kind, p.currency, p.os_images, pp.price, p.min_credit::text
    from unnest(${items.filter((_, i) => readable[i]).map((item) => item.productId)}::uuid[],
                ${items.flatMap((_, i) => (readable[i] ? [cycles[i] as string] : []))}::text[],
                ${items.flatMap((_, i) => (readable[i] ? [i] : []))}::int[]) as i(product_id, cycle, n)
    left join products p on p.id = i.product_id and p.active
    left join product_prices pp on pp.product_id = p.id and pp.cycle = i.cycle`.execute();
  const found = new Map(rows.map((r) => [r.n, r]));
  const priced: PricedItem[] = [];
  for (const [i, item] of items.entries()) {
    const field = items.length === 1 ? "" : `items.${i}.`;
    if (!isUuid(item.productId)) throw badRequest(`${field}productId`, "productId is not a valid identifier");
    const cycle = cycles[i];
    if (cycle === undefined)
      throw badRequest(`${field}billingCycle`, "billingCycle must be a cycle a product is priced in");
    const p = found.get(i);
    if (!p?.id)
      throw apiError("NOT_FOUND", "Product not found", {
        violations: [{ field: `${field}productId`, message: "no such product" }],
      });
    if (currency && p.currency !== currency)
      throw currencyMismatch(p.currency, currency, `${field}productId`);
    if (p.price === null)
      throw badRequest(`${field}billingCycle`, `billingCycle "${cycle}" is not offered for this product`);
    if (item.osImageId && !p.os_images.includes(item.osImageId)) {
      throw badRequest(
        `${field}configOptions.os_image_id`,
        `os_image_id "${item.osImageId}" is not offered for this product`,
      );
    }
    priced.push({
      item,
      cycle,
      productId: p.id,
      productName: p.name,
      kind: p.kind,
      price: money(p.price),
      currency: p.currency,
      minCredit: money(p.min_credit),
    });
  }
  const currencies = new Set(priced.map((p) => p.currency));
  if (currencies.size > 1) throw badRequest("items", "all items of an order must be in one currency");
  return priced;
}

/**
 * Creates the order, its services (pending_payment) and its proforma, and settles from credit.
 * `locked` is the payer's balance when the caller has already locked it (see lockBalance).
 */
export async function placeOrder(
  tx: TxSql,
  ns: string,
  ctx: OrderContext,
  priced: PricedItem[],
  locked?: Units,
): Promise<PlacedOrder> {
  {
    const currency = priced[0].currency;
    // Hourly items are charged from credit each hour, without a document, once the balance
    // reaches their minimum; the document covers the other items only.
    const hourly = priced.filter((p) => p.cycle === HOURLY);
    const billed = priced.filter((p) => p.cycle !== HOURLY);
    if (hourly.length > 0) {
      const needed = hourly.reduce((s, p) => s + p.minCredit, 0n);
      const balance = locked ?? (await lockBalance(tx, ctx.personId, ctx.customerId, currency));
      if (balance < needed || balance === 0n) {
        throw apiError(
          "BAD_REQUEST",
          `Hourly products need a minimum credit balance of ${formatMoney(needed)} ${currency}`,
          {
            violations: [
              {
                field: "billingCycle",
                message: `hourly needs a credit balance of at least ${toNumber(needed)}`,
              },
            ],
          },
        );
      }
    }
    const total = billed.reduce((s, p) => s + p.price, 0n);
    const orderId = newId();
    // The order and its services are written by the statement that writes the proforma (one round
    // trip), or on their own when every item is hourly and there is no document.
    const orderInsert = tx`
      order_row as (
        insert into orders (id, order_number, customer_id, person_id, total, currency, partner_id, external_order_id,
                            external_customer_id, payment_mode)
        values (${orderId}, 'ORD-' || nextval('order_numbers'), ${ctx.customerId}, ${ctx.personId}, ${formatMoney(total)},
                ${currency}, ${ctx.partnerId ?? null}, ${ctx.externalOrderId ?? null}, ${ctx.externalCustomerId ?? null},
                ${ctx.paymentMode}))`;
    const now = clock.now();
    const serviceIds = priced.map(() => newId());
    const servicesInsert = tx`service_rows as (insert into services ${tx(
      priced.map((p, i) => ({
        id: serviceIds[i],
        customer_id: ctx.customerId,
        person_id: ctx.personId,
        product_id: p.productId,
        order_id: orderId,
        kind: p.kind,
        name: p.productName,
        hostname: p.item.hostname || `${p.kind}-${serviceIds[i].slice(-8)}`,
        status: p.cycle === HOURLY ? "pending" : "pending_payment",
        cycle: p.cycle,
        amount: formatMoney(p.price),
        currency,
        next_due_date: addCycle(now, p.cycle),
        os_image_id: p.item.osImageId,
        partner_id: ctx.partnerId ?? null,
      })),
    )})`;
    const servicesOfOrder = () =>
      selectServices(tx, "s.order_id = $1 order by s.created_at, s.id", [orderId]);
    // Hourly services are charged their first hour now; the charger takes each following hour.
    const chargeFirstHours = async () => {
      for (const [i, p] of priced.entries()) {
        if (p.cycle !== HOURLY) continue;
        await move(tx, {
          personId: ctx.personId,
          customerId: ctx.customerId,
          amount: -p.price,
          kind: "hourly_charge",
          description: `${p.productName}: first hour`,
        });
        await tx`update services set charged_until = ${addCycle(now, HOURLY)} where id = ${serviceIds[i]}`;
      }
    };
    if (billed.length === 0) {
      await tx`with ${orderInsert}, ${servicesInsert} select 1`;
      await chargeFirstHours();
      await tx`update orders set payment_status = 'paid', status = 'active' where id = ${orderId}`;
      const [paidOrder] = await tx<OrderRow[]>`select * from orders where id = ${orderId}`;
      if (!ctx.partnerId) await orderEvent(tx, ns, "order.paid", paidOrder, {});
      const services = await servicesOfOrder();
      return create(PlacedOrderSchema, {
        order: orderOut(paidOrder, services),
        settled: true,
        creditBalance: moneyOut(await balanceOf(tx, ctx.personId), currency),
      });
    }
    const proformaLines = priced
      .map((p, i) => ({ p, serviceId: serviceIds[i] }))
      .filter(({ p }) => p.cycle !== HOURLY)
      .map(({ p, serviceId }) => ({
        description: `${p.productName} (${p.cycle})`,
        amount: p.price,
        serviceId,
      }));
    // The order's proforma and who pays it, whichever way it is settled below.
    const proformaDoc: NewDocument & { kind: "proforma" } = {
      kind: "proforma",
      customerId: ctx.customerId,
      personId: ctx.personId,
      currency,
      purpose: "order",
      orderId,
      lines: proformaLines,
      with: tx`${orderInsert}, ${servicesInsert}`,
    };
    const payer = { personId: ctx.personId, customerId: ctx.customerId };
    if (ctx.paymentMode === "credit" && hourly.length === 0) {
      // The common order: settled from credit at once. Its statements go together (see
      // createAndPayFromCredit), so it costs two round trips after the balance lock, not seven.
      const balance = locked ?? (await lockBalance(tx, ctx.personId, ctx.customerId, currency));
      if (balance >= total) {
        const paid = await createAndPayFromCredit(tx, ns, proformaDoc, payer, () =>
          servicesOfOrder().execute(),
        );
        const paidOrder = paid.order;
        if (!paidOrder) throw new Error("a paid order proforma left no order");
        return create(PlacedOrderSchema, {
          order: orderOut(paidOrder, paid.more),
          proforma: documentOut(paid.document),
          invoice: paid.invoice ? documentOut(paid.invoice) : undefined,
          settled: true,
          creditBalance: moneyOut(paid.newBalance, currency),
        });
      }
    }
    const proforma = await createDocument(tx, proformaDoc);
    await chargeFirstHours();
    let settled = false;
    let invoice: DocumentRow | undefined;
    let proformaNow: DocumentRow | undefined;
    let paidOrder: OrderRow | undefined;
    let balance: Units | undefined;
    let paymentError = "";
    if (ctx.paymentMode === "credit") {
      balance = await lockBalance(tx, ctx.personId, ctx.customerId, currency);
      if (balance >= total) {
        const paid = await payNewDocumentFromCredit(
          tx,
          ns,
          { document: proforma, lines: proformaLines },
          payer,
        );
        invoice = paid.invoice;
        proformaNow = paid.document;
        paidOrder = paid.order;
        balance = paid.newBalance;
        settled = true;
      } else {
        paymentError = `Insufficient credit: balance ${formatMoney(balance)} ${currency}, order total ${formatMoney(total)} ${currency}`;
      }
    }
    if (!settled) {
      const [order] = await tx<OrderRow[]>`select * from orders where id = ${orderId}`;
      if (ctx.partnerId && ctx.paymentMode === "credit") {
        await tx`update orders set payment_error = ${paymentError} where id = ${orderId}`;
        await orderEvent(tx, ns, "order.payment_failed", order, { paymentError });
      } else {
        await orderEvent(tx, ns, "order.invoiced", order, { invoiceId: proforma.id });
      }
    }
    const services = await servicesOfOrder();
    // Settled, the payment returned the order as it left it; otherwise it is read once more.
    const orderNow = paidOrder ?? (await tx<OrderRow[]>`select * from orders where id = ${orderId}`)[0];
    return create(PlacedOrderSchema, {
      order: orderOut(orderNow, services),
      proforma: documentOut(proformaNow ?? proforma),
      invoice: invoice ? documentOut(invoice) : undefined,
      settled,
      creditBalance: moneyOut(balance ?? (await balanceOf(tx, ctx.personId)), currency),
    });
  }
}

export function createOrders(sql: Sql, ns: string): BillingHandlers {
  return {
    async createOrder(req) {
      const caller = callerOf(req.caller);
      const result = await transact(sql, async (tx) => {
        // One round trip: the idempotency record, the catalogue and the payer's balance (locked for
        // the rest of the transaction) are read together, in that order.
        const [again, priced, row] = await Promise.all([
          replay(tx, caller.personId, "order", req.idempotencyKey, req.requestHash),
          priceItems(tx, req.items, caller.currency),
          lockedBalance(tx, caller.personId),
        ]);
        if (again) return fromJsonString(PlacedOrderSchema, again);
        const ctx = {
          customerId: caller.customerId,
          personId: caller.personId,
          paymentMode: "credit" as const,
        };
        const balance = await lockBalance(tx, caller.personId, caller.customerId, priced[0].currency, row);
        const placed = await placeOrder(tx, ns, ctx, priced, balance);
        const stored = toJsonString(PlacedOrderSchema, placed);
        await remember(tx, caller.personId, "order", req.idempotencyKey, req.requestHash, stored);
        return placed;
      });
      return { placed: result };
    },

    async listOrders(req) {
      const caller = callerOf(req.caller);
      const p = page(req.page, req.limit, 20);
      const status = orderStatus.in(req.status) ?? null;
      const paid = orderPaymentStatus.in(req.paymentStatus) ?? null;
      const rows = await sql<(OrderRow & { total_count: string })[]>`
        select *, count(*) over () as total_count from orders
        where customer_id = ${caller.customerId} and (${status}::text is null or status = ${status})
          and (${paid}::text is null or payment_status = ${paid})
        order by created_at desc, id desc limit ${p.limit} offset ${p.offset}`;
      const total = rows.length
        ? Number(rows[0].total_count)
        : await countOrders(sql, caller.customerId, status, paid);
      return { orders: rows.map((o) => orderOut(o)), total };
    },

    async getOrder(req) {
      const caller = callerOf(req.caller);
      const [order] = await sql<
        OrderRow[]
      >`select * from orders where id = ${req.orderId} and customer_id = ${caller.customerId}`;
      if (!order) throw notFound("Order");
      const services = await selectServices(sql, "s.order_id = $1 order by s.created_at, s.id", [order.id]);
      const docs = await sql<
        DocumentRow[]
      >`select * from documents where order_id = ${order.id} order by created_at`;
      return { order: orderOut(order, services, docs), services: services.map(summaryOut) };
    },
  };
}

async function countOrders(sql: Sql, customerId: string, status: string | null, paid: string | null) {
  const [{ n }] = await sql<{ n: number }[]>`
    select count(*)::int as n from orders where customer_id = ${customerId}
      and (${status}::text is null or status = ${status}) and (${paid}::text is null or payment_status = ${paid})`;
  return n;
}
