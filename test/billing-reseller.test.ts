import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { BillingCycle, ServiceStatus, ServiceStatusSchema } from "@hb/contracts/hb/billing/v1/common_pb";
import { OrderPaymentMode } from "@hb/contracts/hb/billing/v1/orders_pb";
import { ServiceAction, ServiceActionSchema } from "@hb/contracts/hb/billing/v1/services_pb";
import { type Event, EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { enumFromWord, resolveError } from "@hb/platform";
import postgres from "postgres";
import { type Account, addCredit, billing, eventually, newAccount, newProduct } from "./helpers.ts";

// The billing side of the reseller programme, driven through the RPCs the gateway's reseller
// routes call, with the events checked in billing's outbox (what the webhooks service consumes).

const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
after(() => sql.end());

const callerOf = (a: Account) => ({ customerId: a.customerId, personId: a.ownerId, isOwner: true });

async function outboxEvents(type: string): Promise<Event[]> {
  const rows = await sql<{ payload: Buffer }[]>`
    select payload from billing.outbox where subject = ${`${process.env.HB_NS}.events.${type}`}`;
  return rows.map((r) => fromBinary(EventSchema, new Uint8Array(r.payload)));
}

/** The spec's machine code a billing call was refused with ("OK" when it was not refused). */
async function rpcCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "OK";
  } catch (err) {
    return resolveError(err).code;
  }
}

describe("billing's internal callers", () => {
  it("refuses a caller whose ids are not UUIDs with BAD_REQUEST, not an internal error", async () => {
    assert.equal(
      await rpcCode(billing.getAccount({ caller: { customerId: "not-a-uuid", personId: "nor-this" } })),
      "BAD_REQUEST",
    );
  });
});

describe("reseller orders (billing side)", () => {
  it("invoice mode raises a document and order.invoiced with the partner's ids; credit is untouched", async () => {
    const p = await newAccount();
    await addCredit(p, "100");
    const product = await newProduct("vps", { monthly: "15.0000" });
    const ext = `ext-${Date.now()}`;
    const r = await billing.createResellerOrder({
      caller: callerOf(p),
      externalOrderId: ext,
      externalCustomerId: "cust-42",
      paymentMode: OrderPaymentMode.INVOICE,
      items: [{ productId: product.id, billingCycle: BillingCycle.MONTHLY, hostname: "r1" }],
    });
    assert.equal(r.placed!.settled, false);
    const ev = await eventually(async () =>
      (await outboxEvents("order.invoiced")).find(
        (e) => e.payload.case === "order" && e.payload.value.externalOrderId === ext,
      ),
    );
    assert.equal(ev.partnerId, p.customerId);
    assert.equal(ev.payload.case, "order");
    if (ev.payload.case === "order") {
      assert.equal(ev.payload.value.externalCustomerId, "cust-42");
      assert.ok(ev.payload.value.invoiceId);
    }
    const [bal] = await sql<
      { balance: string }[]
    >`select balance::text from billing.balances where person_id = ${p.ownerId}`;
    assert.equal(bal.balance, "100.0000");
    // The same external id twice is a conflict, an unknown payment mode a bad request.
    assert.equal(
      await rpcCode(
        billing.createResellerOrder({
          caller: callerOf(p),
          externalOrderId: ext,
          paymentMode: OrderPaymentMode.INVOICE,
          items: [{ productId: product.id, billingCycle: BillingCycle.MONTHLY }],
        }),
      ),
      "CONFLICT",
    );
    assert.equal(
      await rpcCode(
        billing.createResellerOrder({
          caller: callerOf(p),
          externalOrderId: `${ext}-b`,
          paymentMode: OrderPaymentMode.UNSPECIFIED,
          items: [{ productId: product.id, billingCycle: BillingCycle.MONTHLY }],
        }),
      ),
      "BAD_REQUEST",
    );
    const orders = await sql<{ n: number }[]>`
      select count(*)::int as n from billing.orders where partner_id = ${p.customerId}`;
    assert.equal(orders[0].n, 1, "neither refused call created an order");
    // Another partner cannot see the order.
    const other = await newAccount();
    const list = await billing.listResellerOrders({ caller: callerOf(other), externalOrderId: ext });
    assert.equal(list.orders.length, 0);
  });

  it("suspends, unsuspends and terminates a partner's service with events carrying partnerId; others get not found", async () => {
    const p = await newAccount();
    await addCredit(p, "100");
    const product = await newProduct("vps", { monthly: "10.0000" });
    const ext = `ext-s-${Date.now()}`;
    const r = await billing.createResellerOrder({
      caller: callerOf(p),
      externalOrderId: ext,
      externalCustomerId: "c-1",
      paymentMode: OrderPaymentMode.CREDIT,
      items: [{ productId: product.id, billingCycle: BillingCycle.MONTHLY, hostname: "s1" }],
    });
    const orderId = r.placed!.order!.id;
    assert.ok(orderId);
    const svc = await eventually(async () => {
      const o = (await billing.getResellerOrder({ caller: callerOf(p), orderId })).order!;
      const s = o.services[0];
      return s?.status === ServiceStatus.ACTIVE ? s : undefined;
    }, 20_000);
    const other = await newAccount();
    assert.equal(
      await rpcCode(
        billing.resellerSetServiceState({
          caller: callerOf(other),
          serviceId: svc.id,
          action: ServiceAction.SUSPEND,
        }),
      ),
      "NOT_FOUND",
    );
    for (const [action, status, type] of [
      ["suspend", "suspended", "service.suspended"],
      ["unsuspend", "active", "service.unsuspended"],
      ["terminate", "terminated", "service.terminated"],
    ] as const) {
      const res = await billing.resellerSetServiceState({
        caller: callerOf(p),
        serviceId: svc.id,
        action: enumFromWord(ServiceActionSchema, action),
        reason: "test",
      });
      assert.equal(res.service?.service?.status, enumFromWord(ServiceStatusSchema, status));
      const ev = await eventually(async () =>
        (await outboxEvents(type)).find(
          (e) => e.payload.case === "service" && e.payload.value.serviceId === svc.id,
        ),
      );
      assert.equal(ev.partnerId, p.customerId);
      if (ev.payload.case === "service") assert.equal(ev.payload.value.externalOrderId, ext);
    }
    const { services } = await billing.listResellerServices({ caller: callerOf(p) });
    assert.equal(services.find((s) => s.service?.id === svc.id)?.service?.status, ServiceStatus.TERMINATED);
  });
});
