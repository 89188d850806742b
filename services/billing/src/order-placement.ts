/**
 * Placing an order, in the steps a checkout takes: price the items (priceItems), then, in the
 * caller's transaction, plan the order, check the hourly items' credit, write the order with its
 * services and proforma, settle it from credit when it can, and emit what happened (placeOrder).
 * The customer's and the reseller's order handlers both place orders here.
 */
import { create } from "@bufbuild/protobuf";
import { type OrderItem, type PlacedOrder, PlacedOrderSchema } from "@hb/contracts/hb/billing/v1/orders_pb";
import { apiError, badRequest, isUuid, newId, type Sql, type TxSql } from "@hb/platform";
import { currencyMismatch, lockBalance } from "./account-currency.ts";
import { clock } from "./clock.ts";
import { moneyOut } from "./contract-values.ts";
import {
  createAndPayFromCredit,
  createDocument,
  type NewDocument,
  type PaymentOutcome,
  payNewDocumentFromCredit,
} from "./documents.ts";
import { billingCycle } from "./enums.ts";
import { orderEvent } from "./events.ts";
import { balanceOf, move } from "./ledger.ts";
// What paying an order's proforma does, registered with the "document paid" dispatch.
import "./order-paid.ts";
import { addCycle, formatMoney, HOURLY, money, toNumber, type Units } from "./money.ts";
import {
  addonLines,
  addonsTotal,
  orderAddonsCte,
  type PricedAddon,
  priceOrderAddons,
} from "./order-addons.ts";
import { type ProvisionItem, wakeProvisionerUnlessHandedOver } from "./provisioning.ts";
import { type DocumentRow, type OrderRow, type ServiceRow, selectServices } from "./records.ts";
import { documentOut, orderOut } from "./records-out.ts";
import { recordRows } from "./service-records.ts";

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
  /** Add-ons chosen with the item (order-addons.ts). */
  addons: PricedAddon[];
  /** What compute builds for it (the product's). */
  spec: { vcpus: number; memory_mb: number; disk_gb: number; location: string };
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
      vcpus: number;
      memory_mb: number;
      disk_gb: number;
      location: string;
    }[]
  >`
    select i.n::int as n, p.id, p.name, p.kind, p.currency, p.os_images, pp.price, p.min_credit::text,
      p.vcpus, p.memory_mb, p.disk_gb, p.location
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
      addons: [],
      spec: { vcpus: p.vcpus, memory_mb: p.memory_mb, disk_gb: p.disk_gb, location: p.location },
    });
  }
  const addons = await priceOrderAddons(db, priced, (i) => (items.length === 1 ? "" : `items.${i}.`));
  for (const [i, p] of priced.entries()) p.addons = addons[i];
  const currencies = new Set(priced.map((p) => p.currency));
  if (currencies.size > 1) throw badRequest("items", "all items of an order must be in one currency");
  return priced;
}

/** An order's items as they are paid, and the ids its rows are written under. */
interface OrderPlan {
  orderId: string;
  currency: string;
  /** Charged from credit each hour without a document, once the balance reaches their minimum. */
  hourly: PricedItem[];
  /** The items the proforma bills. */
  billed: PricedItem[];
  /** The proforma's total (the billed items'). */
  total: Units;
  /** Every item's service, in the order sent. */
  items: { priced: PricedItem; serviceId: string }[];
  now: Date;
}

/** Statements that run as CTEs of the next one (see NewDocument.with). */
type Ctes = NonNullable<NewDocument["with"]>;

/** What every step after the checks works with. */
interface Checkout {
  tx: TxSql;
  ns: string;
  ctx: OrderContext;
  plan: OrderPlan;
  /** The order and its services, not yet written (orderAndServicesCtes). */
  rows: Ctes;
  /** The payer's balance, locked, when a step before has read it. */
  balance: Units | undefined;
}

/** What placing an order hands back, before it is put in the contract's shape. */
interface Placement {
  order: OrderRow;
  services: ServiceRow[];
  proforma?: DocumentRow;
  invoice?: DocumentRow;
  settled: boolean;
  creditBalance: Units;
}

/**
 * Places a priced order in the caller's transaction, in the steps a checkout takes: plan it, check
 * the hourly items' credit, write the order, its services (pending_payment) and its proforma, settle
 * it from credit when it can, and emit what happened. `locked` is the payer's balance when the caller
 * has already locked it (see lockBalance).
 */
export async function placeOrder(
  tx: TxSql,
  ns: string,
  ctx: OrderContext,
  priced: PricedItem[],
  locked?: Units,
): Promise<PlacedOrder> {
  return (await placeOrderWithBuilds(tx, ns, ctx, priced, locked)).placed;
}

/**
 * placeOrder, with what compute needs to build the services the order leaves paid (`pending`),
 * for a caller that hands them over itself once it has committed.
 */
export async function placeOrderWithBuilds(
  tx: TxSql,
  ns: string,
  ctx: OrderContext,
  priced: PricedItem[],
  locked?: Units,
): Promise<{ placed: PlacedOrder; builds: ProvisionItem[] }> {
  const plan = planOrder(priced);
  const balance = await checkHourlyCredit(tx, ctx, plan, locked);
  const c: Checkout = { tx, ns, ctx, plan, rows: orderAndServicesCtes(tx, ctx, plan), balance };
  const placement =
    plan.billed.length === 0
      ? await placeHourlyOnly(c)
      : ((await settleAtOnce(c)) ?? (await invoiceThenSettle(c)));
  // The services as the order leaves them (written, and paid or not), for compute's copy.
  await recordRows(tx, ns, placement.services);
  const specs = new Map(plan.items.map(({ priced: p, serviceId }) => [serviceId, p.spec]));
  const builds = placement.services.flatMap((s): ProvisionItem[] => {
    const spec = specs.get(s.id);
    return s.status === "pending" && spec
      ? [
          {
            id: s.id,
            customer_id: s.customer_id,
            kind: s.kind,
            product_id: s.product_id,
            hostname: s.hostname,
            os_image_id: s.os_image_id,
            ...spec,
          },
        ]
      : [];
  });
  return { placed: placedOut(placement, plan.currency), builds };
}

function planOrder(priced: PricedItem[]): OrderPlan {
  const billed = priced.filter((p) => p.cycle !== HOURLY);
  return {
    orderId: newId(),
    currency: priced[0].currency,
    hourly: priced.filter((p) => p.cycle === HOURLY),
    billed,
    total: billed.reduce((s, p) => s + p.price + addonsTotal(p.addons), 0n),
    items: priced.map((p) => ({ priced: p, serviceId: newId() })),
    now: clock.now(),
  };
}

/**
 * Refuses an order whose hourly items need more credit than the payer holds. Returns the payer's
 * locked balance when it is known (given, or read here).
 */
async function checkHourlyCredit(
  tx: TxSql,
  ctx: OrderContext,
  plan: OrderPlan,
  locked: Units | undefined,
): Promise<Units | undefined> {
  if (plan.hourly.length === 0) return locked;
  const needed = plan.hourly.reduce((s, p) => s + p.minCredit, 0n);
  const balance = locked ?? (await lockBalance(tx, ctx.personId, ctx.customerId, plan.currency));
  if (balance < needed || balance === 0n) {
    throw apiError(
      "BAD_REQUEST",
      `Hourly products need a minimum credit balance of ${formatMoney(needed)} ${plan.currency}`,
      {
        violations: [
          { field: "billingCycle", message: `hourly needs a credit balance of at least ${toNumber(needed)}` },
        ],
      },
    );
  }
  return balance;
}

/**
 * The order and its services, as CTEs: the statement that writes the proforma runs them (one round
 * trip), or they run on their own when every item is hourly and there is no document.
 */
function orderAndServicesCtes(tx: TxSql, ctx: OrderContext, plan: OrderPlan): Ctes {
  const { orderId, currency, now } = plan;
  const order = tx`
    order_row as (
      insert into orders (id, order_number, customer_id, person_id, total, currency, partner_id, external_order_id,
                          external_customer_id, payment_mode, created_at)
      values (${orderId}, 'ORD-' || nextval('order_numbers'), ${ctx.customerId}, ${ctx.personId}, ${formatMoney(plan.total)},
              ${currency}, ${ctx.partnerId ?? null}, ${ctx.externalOrderId ?? null}, ${ctx.externalCustomerId ?? null},
              ${ctx.paymentMode}, ${now}))`;
  // A fragment of its own: postgres.js picks the row builder by the keyword before it.
  const services = tx`service_rows as (insert into services ${tx(
    plan.items.map(({ priced: p, serviceId }) => ({
      id: serviceId,
      customer_id: ctx.customerId,
      person_id: ctx.personId,
      product_id: p.productId,
      order_id: orderId,
      kind: p.kind,
      name: p.productName,
      hostname: p.item.hostname || `${p.kind}-${serviceId.slice(-8)}`,
      status: p.cycle === HOURLY ? "pending" : "pending_payment",
      cycle: p.cycle,
      amount: formatMoney(p.price),
      currency,
      next_due_date: addCycle(now, p.cycle),
      os_image_id: p.item.osImageId,
      partner_id: ctx.partnerId ?? null,
      // Billing's time, never the database's: a moved billing clock dates what it writes (issue 28 §3).
      created_at: now,
    })),
  )})`;
  const addons = orderAddonsCte(
    tx,
    plan.items.map(({ priced, serviceId }) => ({ addons: priced.addons, serviceId })),
    now,
  );
  return addons ? tx`${order}, ${services}, ${addons}` : tx`${order}, ${services}`;
}

const servicesOfOrder = (tx: TxSql, orderId: string) =>
  selectServices(tx, "s.order_id = $1 order by s.created_at, s.id", [orderId]);

/**
 * Hourly services are charged their first hour now; the charger takes each following hour. They
 * were written `pending`, so the provisioner is woken for them (at commit).
 */
async function chargeFirstHours(tx: TxSql, ctx: OrderContext, plan: OrderPlan) {
  // Sent now and awaited last: it rides in the round trips that follow.
  const woken = plan.hourly.length > 0 ? wakeProvisionerUnlessHandedOver(tx) : undefined;
  for (const { priced: p, serviceId } of plan.items) {
    if (p.cycle !== HOURLY) continue;
    await move(tx, {
      personId: ctx.personId,
      customerId: ctx.customerId,
      amount: -p.price,
      kind: "hourly_charge",
      description: `${p.productName}: first hour`,
    });
    await tx`update services set charged_until = ${addCycle(plan.now, HOURLY)} where id = ${serviceId}`;
  }
  await woken;
}

/** Every item hourly: no document; the first hours are charged and the order is paid at once. */
async function placeHourlyOnly({ tx, ns, ctx, plan, rows }: Checkout): Promise<Placement> {
  await tx`with ${rows} select 1`;
  await chargeFirstHours(tx, ctx, plan);
  await tx`update orders set payment_status = 'paid', status = 'active' where id = ${plan.orderId}`;
  const [order] = await tx<OrderRow[]>`select * from orders where id = ${plan.orderId}`;
  if (!ctx.partnerId) await orderEvent(tx, ns, "order.paid", order, {});
  return {
    order,
    services: await servicesOfOrder(tx, plan.orderId),
    settled: true,
    creditBalance: await balanceOf(tx, ctx.personId),
  };
}

/** The order's proforma: its billed items, each line naming its service. */
function proformaOf({ ctx, plan, rows }: Checkout) {
  const lines = plan.items
    .filter(({ priced }) => priced.cycle !== HOURLY)
    .flatMap(({ priced: p, serviceId }) => [
      { description: `${p.productName} (${p.cycle})`, amount: p.price, serviceId },
      ...addonLines(p.addons, serviceId),
    ]);
  const doc: NewDocument & { kind: "proforma" } = {
    kind: "proforma",
    customerId: ctx.customerId,
    personId: ctx.personId,
    currency: plan.currency,
    purpose: "order",
    orderId: plan.orderId,
    lines,
    with: rows,
  };
  return doc;
}

/**
 * The common order: no hourly item, paid from credit that covers it. Its statements go together
 * (see createAndPayFromCredit), so it costs two round trips after the balance lock, not seven. Its
 * services are the ones the payment started, as the payment's update returned them (every service
 * of such an order starts with it): no read of them again.
 * Undefined when the order is not of that kind.
 */
async function settleAtOnce(c: Checkout): Promise<Placement | undefined> {
  const { tx, ns, ctx, plan } = c;
  if (ctx.paymentMode !== "credit" || plan.hourly.length > 0) return undefined;
  const balance = c.balance ?? (await lockBalance(tx, ctx.personId, ctx.customerId, plan.currency));
  if (balance < plan.total) return undefined;
  const paid = await createAndPayFromCredit(tx, ns, proformaOf(c), payerOf(ctx));
  if (paid.services?.length !== plan.items.length)
    throw new Error(
      `a paid order started ${paid.services?.length ?? 0} of its ${plan.items.length} services`,
    );
  return paidPlacement(paid, paid.services);
}

/** An order whose proforma credit paid in full. */
function paidPlacement(paid: PaymentOutcome, services: ServiceRow[]): Placement {
  if (!paid.order) throw new Error("a paid order proforma left no order");
  return {
    order: paid.order,
    services,
    proforma: paid.document,
    invoice: paid.invoice,
    settled: true,
    creditBalance: paid.newBalance,
  };
}

/**
 * Any other order with a document: the proforma is raised and the first hours charged; in credit
 * mode it is paid when the balance covers it, otherwise the order waits for payment (a partner's
 * credit order learns why it failed).
 */
async function invoiceThenSettle(c: Checkout): Promise<Placement> {
  const { tx, ns, ctx, plan } = c;
  const doc = proformaOf(c);
  const proforma = await createDocument(tx, doc);
  await chargeFirstHours(tx, ctx, plan);
  if (ctx.paymentMode === "credit") {
    // The first hours moved the balance; without them it is still the one locked before.
    const balance =
      plan.hourly.length === 0 && c.balance !== undefined
        ? c.balance
        : await lockBalance(tx, ctx.personId, ctx.customerId, plan.currency);
    if (balance >= plan.total) {
      const paid = await payNewDocumentFromCredit(
        tx,
        ns,
        { document: proforma, lines: doc.lines },
        payerOf(ctx),
      );
      return paidPlacement(paid, await servicesOfOrder(tx, plan.orderId));
    }
    const paymentError = `Insufficient credit: balance ${formatMoney(balance)} ${plan.currency}, order total ${formatMoney(plan.total)} ${plan.currency}`;
    return unsettled(c, proforma, { paymentError, balance });
  }
  return unsettled(c, proforma, {});
}

/**
 * Emits what an unpaid order tells: a partner's credit order that could not be paid records why
 * (order.payment_failed); any other is invoiced (order.invoiced).
 */
async function unsettled(
  { tx, ns, ctx, plan }: Checkout,
  proforma: DocumentRow,
  credit: { paymentError?: string; balance?: Units },
): Promise<Placement> {
  const [order] = await tx<OrderRow[]>`select * from orders where id = ${plan.orderId}`;
  if (ctx.partnerId && credit.paymentError !== undefined) {
    await tx`update orders set payment_error = ${credit.paymentError} where id = ${plan.orderId}`;
    await orderEvent(tx, ns, "order.payment_failed", order, { paymentError: credit.paymentError });
  } else {
    await orderEvent(tx, ns, "order.invoiced", order, { invoiceId: proforma.id });
  }
  const services = await servicesOfOrder(tx, plan.orderId);
  const [orderNow] = await tx<OrderRow[]>`select * from orders where id = ${plan.orderId}`;
  return {
    order: orderNow,
    services,
    proforma,
    settled: false,
    creditBalance: credit.balance ?? (await balanceOf(tx, ctx.personId)),
  };
}

const payerOf = (ctx: OrderContext) => ({ personId: ctx.personId, customerId: ctx.customerId });

function placedOut(p: Placement, currency: string): PlacedOrder {
  return create(PlacedOrderSchema, {
    order: orderOut(p.order, p.services),
    proforma: p.proforma ? documentOut(p.proforma) : undefined,
    invoice: p.invoice ? documentOut(p.invoice) : undefined,
    settled: p.settled,
    creditBalance: moneyOut(p.creditBalance, currency),
  });
}
