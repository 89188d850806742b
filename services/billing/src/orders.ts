import { fromJsonString, toJsonString } from "@bufbuild/protobuf";
import { PlacedOrderSchema } from "@hb/contracts/hb/billing/v1/orders_pb";
import { notFound, PAGE_SIZE, type Sql } from "@hb/platform";
import { lockBalance, lockedBalance } from "./account-currency.ts";
import { orderPaymentStatus, orderStatus } from "./enums.ts";
import type { BillingHandlers } from "./handlers.ts";
import { remember, replay } from "./idempotency.ts";
import { listPage } from "./list-query.ts";
import { placeOrderWithBuilds, priceItems } from "./order-placement.ts";
import { handsOverItself, type ProvisioningHandOver } from "./provisioning.ts";
import { DOCUMENT_NAMES, type DocumentRow, type OrderRow, selectServices, summaryOut } from "./records.ts";
import { orderOut } from "./records-out.ts";
import { forgetWritten, takeWritten } from "./service-records.ts";
import { callerOf, collectAtCommit } from "./shared.ts";
import { transactionGroup } from "./transaction-group.ts";

export function createOrders(sql: Sql, ns: string, handOver?: ProvisioningHandOver): BillingHandlers {
  // Orders that arrive while others are being placed wait together and share one commit.
  const placing = transactionGroup(sql);
  return {
    async createOrder(req) {
      const caller = callerOf(req.caller);
      let claimed: string[] = [];
      const { placed, builds } = await placing
        .run(async (tx, withCommit) => {
          // A retried attempt starts over: what a rolled-back one wrote never happened.
          handOver?.release(claimed);
          claimed = [];
          if (handOver) {
            forgetWritten();
            handsOverItself(tx);
          }
          const atCommit = collectAtCommit(tx);
          // One round trip, with the begin: the idempotency record, the catalogue and the payer's balance (locked for
          // the rest of the transaction) are read together, in that order.
          const [again, priced, row] = await Promise.all([
            replay(tx, caller.personId, "order", req.idempotencyKey, req.requestHash),
            priceItems(tx, req.items, caller.currency),
            lockedBalance(tx, caller.personId),
          ]);
          if (again) return { placed: fromJsonString(PlacedOrderSchema, again), builds: [] };
          const ctx = {
            customerId: caller.customerId,
            personId: caller.personId,
            paymentMode: "credit" as const,
          };
          const balance = await lockBalance(tx, caller.personId, caller.customerId, priced[0].currency, row);
          const placement = await placeOrderWithBuilds(tx, ns, ctx, priced, balance);
          // Claimed before the commit makes them visible to the provisioner (released if it fails).
          claimed = placement.builds.map((b) => b.id);
          handOver?.claim(claimed);
          const stored = toJsonString(PlacedOrderSchema, placement.placed);
          // The order's event and records were sent without waiting (sentWithCommit): they, the key's
          // answer and the commit share one round trip.
          withCommit(
            Promise.all([
              atCommit(),
              remember(tx, caller.personId, "order", req.idempotencyKey, req.requestHash, stored),
            ]),
          );
          return placement;
        }, caller.personId)
        .catch((err) => {
          handOver?.release(claimed);
          throw err;
        });
      // Committed: the records it wrote and the builds of what it paid reach compute in one call
      // before the answer (read-your-writes, service-records.ts); withRecordHandOver has nothing left.
      if (handOver) await handOver.send(takeWritten(), builds);
      return { placed };
    },

    async listOrders(req) {
      const caller = callerOf(req.caller);
      const status = orderStatus.in(req.status) ?? null;
      const paid = orderPaymentStatus.in(req.paymentStatus) ?? null;
      const { rows, total } = await listPage<OrderRow>(sql, req, PAGE_SIZE.default, {
        select: sql`select *`,
        from: sql`from orders where customer_id = ${caller.customerId}
          ${status ? sql`and status = ${status}` : sql``} ${paid ? sql`and payment_status = ${paid}` : sql``}`,
        orderBy: sql`created_at desc, id desc`,
      });
      // The page's services in one statement: each order says how its services stand (a list that
      // reads "all terminated" for an order whose every service is gone, issue 29 §3).
      const services = rows.length
        ? await selectServices(sql, "s.order_id = any($1::uuid[]) order by s.created_at, s.id", [
            rows.map((o) => o.id),
          ])
        : [];
      return {
        orders: rows.map((o) =>
          orderOut(
            o,
            services.filter((s) => s.order_id === o.id),
          ),
        ),
        total,
      };
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
      >`select documents.*, ${sql.unsafe(DOCUMENT_NAMES)} from documents where order_id = ${order.id} order by created_at`;
      return { order: orderOut(order, services, docs), services: services.map(summaryOut) };
    },
  };
}
