import { create, fromJsonString, type MessageInitShape, toJsonString } from "@bufbuild/protobuf";
import { RetryResellerPaymentResponseSchema } from "@hb/contracts/hb/billing/v1/billing_pb";
import { PlacedOrderSchema } from "@hb/contracts/hb/billing/v1/orders_pb";
import type { ResellerServiceSchema } from "@hb/contracts/hb/billing/v1/services_pb";
import { apiError, notFound, type Sql, type TxSql } from "@hb/platform";
import { lockBalance } from "./account-currency.ts";
import { moneyOut } from "./contract-values.ts";
import { payFromCredit } from "./documents.ts";
import { orderPaymentMode } from "./enums.ts";
import { orderEvent } from "./events.ts";
import type { BillingHandlers } from "./handlers.ts";
import { remember, replay } from "./idempotency.ts";
import { balanceOf } from "./ledger.ts";
import { formatMoney, money } from "./money.ts";
import { placeOrder, priceItems } from "./order-placement.ts";
import { type DocumentRow, type OrderRow, type ServiceRow, selectServices, summaryOut } from "./records.ts";
import { orderOut } from "./records-out.ts";
import { setServiceState, stateActionOf } from "./service-state.ts";
import { callerOf, isUniqueViolation, transact } from "./shared.ts";

export function createReseller(sql: Sql, ns: string): BillingHandlers {
  const ordersWithServices = async (orders: OrderRow[], db: Sql | TxSql = sql) => {
    if (orders.length === 0) return [];
    const services = await selectServices(db, "s.order_id = any($1::uuid[]) order by s.created_at, s.id", [
      orders.map((o) => o.id),
    ]);
    return orders.map((o) =>
      orderOut(
        o,
        services.filter((s) => s.order_id === o.id),
      ),
    );
  };
  const ownOrder = async (partnerId: string, orderId: string) => {
    const [o] = await sql<
      OrderRow[]
    >`select * from orders where id = ${orderId} and partner_id = ${partnerId}`;
    if (!o) throw notFound("Order");
    return o;
  };

  return {
    async createResellerOrder(req) {
      const caller = callerOf(req.caller);
      // The contract requires the partner's order id and a payment mode.
      const paymentMode = orderPaymentMode.defined(req.paymentMode);
      const priced = await priceItems(sql, req.items, caller.currency);
      const out = await transact(sql, async (tx) => {
        const again = await replay(
          tx,
          caller.personId,
          "reseller-order",
          req.idempotencyKey,
          req.requestHash,
        );
        if (again) return fromJsonString(PlacedOrderSchema, again);
        const [dup] =
          await tx`select id from orders where partner_id = ${caller.customerId} and external_order_id = ${req.externalOrderId}`;
        if (dup)
          throw apiError("CONFLICT", `An order with externalOrderId "${req.externalOrderId}" already exists`);
        const placed = await placeOrder(
          tx,
          ns,
          {
            customerId: caller.customerId,
            personId: caller.personId,
            partnerId: caller.customerId,
            externalOrderId: req.externalOrderId,
            externalCustomerId: req.externalCustomerId,
            paymentMode,
          },
          priced,
        );
        const stored = toJsonString(PlacedOrderSchema, placed);
        await remember(tx, caller.personId, "reseller-order", req.idempotencyKey, req.requestHash, stored);
        return placed;
      }).catch((err: unknown) => {
        // The database, not the SELECT above, is what keeps an external id to one order: a
        // concurrent twin fails on the unique index, its transaction rolls back, nothing is charged.
        if (isUniqueViolation(err, "orders_partner_external"))
          throw apiError("CONFLICT", `An order with externalOrderId "${req.externalOrderId}" already exists`);
        throw err;
      });
      return { placed: out };
    },

    async retryResellerPayment(req) {
      const caller = callerOf(req.caller);
      const order = await ownOrder(caller.customerId, req.orderId);
      // The answer is made and kept in the transaction that charged (or failed to): a repeat with
      // the same Idempotency-Key returns it, charging nothing, where a repeat without one would be
      // refused as already paid (the customer's pay routes answer a repeat the same way).
      const out = await transact(sql, async (tx) => {
        const again = await replay(
          tx,
          caller.personId,
          "reseller-retry",
          req.idempotencyKey,
          req.requestHash,
        );
        if (again) return fromJsonString(RetryResellerPaymentResponseSchema, again);
        // Read again after the key's lock: a twin with the same key that paid has committed by now.
        // Not locked: payments lock the balance, then the document (documents.ts).
        const [o] = await tx<OrderRow[]>`select * from orders where id = ${order.id}`;
        if (o.payment_status === "paid") throw apiError("CONFLICT", "The order is already paid");
        const [doc] = await tx<DocumentRow[]>`
          select * from documents where order_id = ${order.id} and status = 'unpaid' order by created_at limit 1`;
        if (!doc) throw apiError("CONFLICT", "The order has no open document");
        const due = money(doc.total) - money(doc.amount_paid);
        const balance = await lockBalance(tx, caller.personId, caller.customerId, doc.currency);
        if (balance < due) {
          const paymentError = `Insufficient credit: balance ${formatMoney(balance)} ${doc.currency}, due ${formatMoney(due)} ${doc.currency}`;
          const [failed] = await tx<
            OrderRow[]
          >`update orders set payment_error = ${paymentError} where id = ${order.id} returning *`;
          await orderEvent(tx, ns, "order.payment_failed", failed, { paymentError });
        } else {
          await payFromCredit(tx, ns, doc.id, caller, undefined);
        }
        const [now] = await tx<OrderRow[]>`select * from orders where id = ${order.id}`;
        const [result] = await ordersWithServices([now], tx);
        const answer = create(RetryResellerPaymentResponseSchema, {
          order: result,
          creditBalance: moneyOut(await balanceOf(tx, caller.personId), now.currency),
        });
        const stored = toJsonString(RetryResellerPaymentResponseSchema, answer);
        await remember(tx, caller.personId, "reseller-retry", req.idempotencyKey, req.requestHash, stored);
        return answer;
      });
      return out;
    },

    async listResellerOrders(req) {
      const caller = callerOf(req.caller);
      const ext = req.externalOrderId || null;
      const orders = await sql<OrderRow[]>`
        select * from orders where partner_id = ${caller.customerId} and (${ext}::text is null or external_order_id = ${ext})
        order by created_at desc limit 200`;
      return { orders: await ordersWithServices(orders) };
    },

    async getResellerOrder(req) {
      const caller = callerOf(req.caller);
      const [result] = await ordersWithServices([await ownOrder(caller.customerId, req.orderId)]);
      return { order: result };
    },

    async listResellerServices(req) {
      const caller = callerOf(req.caller);
      const rows = await selectServices(sql, "s.partner_id = $1 order by s.created_at desc", [
        caller.customerId,
      ]);
      const orders = await sql<OrderRow[]>`select * from orders where partner_id = ${caller.customerId}`;
      const byId = new Map(orders.map((o) => [o.id, o]));
      return {
        services: rows.map((s) => resellerServiceOut(s, s.order_id ? byId.get(s.order_id) : undefined)),
      };
    },

    async resellerSetServiceState(req) {
      const caller = callerOf(req.caller);
      const action = stateActionOf(req.action);
      const updated = await transact(sql, async (tx) => {
        const [s] = await selectServices(tx, "s.id = $1 and s.partner_id = $2 for update of s", [
          req.serviceId,
          caller.customerId,
        ]);
        if (!s) throw notFound("Service");
        return setServiceState(tx, ns, s, action, req.reason || `By the partner (${action})`, "partner");
      });
      const [order] = updated.order_id
        ? await sql<OrderRow[]>`select * from orders where id = ${updated.order_id}`
        : [];
      return { service: resellerServiceOut(updated, order) };
    },
  };
}

/** A partner's service, with the partner's own ids from the order that created it. */
const resellerServiceOut = (
  s: ServiceRow,
  order: OrderRow | undefined,
): MessageInitShape<typeof ResellerServiceSchema> => ({
  service: summaryOut(s),
  externalOrderId: order?.external_order_id ?? undefined,
  externalCustomerId: order?.external_customer_id ?? undefined,
  address: s.server_ip || undefined,
});
