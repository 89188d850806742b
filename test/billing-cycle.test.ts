import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { TopUpService, TopUpStaffService } from "@hb/contracts/hb/billing/v1/payments_pb";
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import { ErrorInfoSchema } from "@hb/contracts/hb/platform/v1/error_pb";
import { connectDb, createLogger } from "@hb/platform";
import postgres from "postgres";
import { startClock } from "../services/billing/src/clock.ts";
import { runRenewalCycle } from "../services/billing/src/renewals.ts";
import { amountOf, cyclePrices, eventually, kindOf } from "./helpers.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { billingClock } from "./support/billing-clock.ts";
import { stackClient } from "./support/clients.ts";
import { activeService, type StackCustomer, stackCustomer } from "./support/stack-customer.ts";

// Issue 21 §1: billing runs the whole recurring cycle by itself (renewal, automatic payment,
// extension, overdue suspension, termination), driven by billing's clock on a private stack. Every
// test makes its own customer and service; a clock move runs the due pass for all of them.
describe("the recurring billing cycle", () => {
  let s: OwnStack;
  let billing: ReturnType<typeof stackClient<[typeof BillingService, typeof BillingStaffService]>>;
  let db: postgres.Sql;
  const DAY = 86_400_000;

  const { now, advanceTo } = billingClock(() => billing.client);
  const product = async (prices: Record<string, string>, minCredit = "") =>
    (
      await billing.client.adminCreateProduct({
        name: `cycle ${Object.keys(prices).join("/")} ${Date.now()}`,
        kind: kindOf("vps"),
        prices: cyclePrices(prices),
        currency: "EUR",
        osImages: ["debian-12"],
        minimumCredit: minCredit ? amountOf(minCredit) : undefined,
      })
    ).product!.id;

  const customer = (credit: string) => stackCustomer(s, billing.client, "Cycle", credit);
  type Customer = StackCustomer;
  const balance = async (c: Customer) =>
    (await c.call("GET", "/account/balance")).body.data.balance as number;
  const service = async (c: Customer, id: string) => (await c.call("GET", `/services/${id}`)).body.data;
  const dueOf = async (c: Customer, id: string) => new Date((await service(c, id)).billing.next_due_date);
  const renewals = async (serviceId: string) =>
    db<{ id: string; status: string; total: string; due_date: Date; purpose: string }[]>`
      select d.id, d.status, d.total::text, d.due_date, d.purpose from documents d
      where d.service_id = ${serviceId} and d.purpose in ('renewal', 'addon')
        and exists (select 1 from document_lines l where l.document_id = d.id and l.description like 'Renewal%')
      order by d.created_at`;
  const events = async (serviceId: string) => {
    const rows = await db<{ subject: string; payload: Buffer }[]>`
      select subject, payload from outbox where subject like ${`${s.stack.env.HB_NS}.events.%`} order by created_at, id`;
    return rows
      .map((r) => fromBinary(EventSchema, new Uint8Array(r.payload)))
      .filter((e) => e.payload.case === "service" && e.payload.value.serviceId === serviceId)
      .map(
        (e) =>
          `${e.type}${e.payload.case === "service" && e.payload.value.reason ? `:${e.payload.value.reason}` : ""}`,
      );
  };

  before(async () => {
    s = await ownStack("cycle", {
      BILLING_CLOCK_CONTROL: "true",
      HOURLY_CHARGE_INTERVAL_MS: "200",
      // A pass a minute: every service here is built because paying its order woke the provisioner.
      PROVISIONER_INTERVAL_MS: "60000",
      // Issue 28 §1: a due pass walks at most 3 instants, so every catch-up here is spread over
      // passes: the outcomes below also prove that a pass resumes where the last one stopped.
      DUE_CATCH_UP_STEPS: "3",
    });
    billing = stackClient(s.stack.env, [BillingService, BillingStaffService], "BILLING_ADDR", 60_000);
    db = postgres(s.stack.env.DATABASE_URL, {
      max: 1,
      onnotice: () => {},
      connection: { search_path: "billing" },
    });
  });
  after(async () => {
    billing?.close();
    await db?.end({ timeout: 5 });
    await s?.close();
  });

  it("has settings with the documented defaults, changed by staff within bounds", async () => {
    const { settings } = await billing.client.adminGetBillingSettings({});
    assert.deepEqual(
      {
        lead: settings!.renewalLeadDays,
        suspend: settings!.suspendGraceDays,
        end: settings!.terminateGraceDays,
      },
      { lead: 7, suspend: 3, end: 30 },
    );
    await assert.rejects(billing.client.adminUpdateBillingSettings({ renewalLeadDays: -1 }));
    const changed = await billing.client.adminUpdateBillingSettings({ renewalLeadDays: 0 });
    assert.equal(changed.settings!.renewalLeadDays, 0);
    assert.equal(changed.settings!.suspendGraceDays, 3, "fields not given are unchanged");
    await billing.client.adminUpdateBillingSettings({ renewalLeadDays: 7 });
  });

  it("refuses a termination grace shorter than the suspension grace (suspended first, then terminated)", async () => {
    // Issue 28 §3: 10 and 2 used to terminate at due + 3 days, never suspended.
    const refused = (change: { suspendGraceDays?: number; terminateGraceDays?: number }) =>
      assert.rejects(billing.client.adminUpdateBillingSettings(change), (err) => {
        const e = ConnectError.from(err);
        assert.equal(e.code, Code.InvalidArgument);
        const [info] = e.findDetails(ErrorInfoSchema);
        assert.equal(info?.code, "BAD_REQUEST");
        assert.deepEqual(
          info?.violations.map((v) => v.field),
          ["terminate_grace_days"],
        );
        return true;
      });
    await refused({ suspendGraceDays: 10, terminateGraceDays: 2 });
    await refused({ terminateGraceDays: 2 }); // below the current suspension grace (3)
    await refused({ suspendGraceDays: 31 }); // above the current termination grace (30)
    const { settings } = await billing.client.adminGetBillingSettings({});
    assert.deepEqual([settings!.suspendGraceDays, settings!.terminateGraceDays], [3, 30], "nothing changed");
    // The same day is an order (suspended, then terminated), and 0 never terminates.
    const same = await billing.client.adminUpdateBillingSettings({
      suspendGraceDays: 5,
      terminateGraceDays: 5,
    });
    assert.deepEqual([same.settings!.suspendGraceDays, same.settings!.terminateGraceDays], [5, 5]);
    const never = await billing.client.adminUpdateBillingSettings({
      suspendGraceDays: 10,
      terminateGraceDays: 0,
    });
    assert.deepEqual([never.settings!.suspendGraceDays, never.settings!.terminateGraceDays], [10, 0]);
    await billing.client.adminUpdateBillingSettings({ suspendGraceDays: 3, terminateGraceDays: 30 });
  });

  it("sends a paid order's services to compute at once, not at the provisioner's next pass", async () => {
    const c = await customer("100");
    const productId = await product({ monthly: "10.0000" });
    const order = await c.call("POST", "/orders", { productId, billingCycle: "monthly" });
    assert.equal(order.status, 201, order.text);
    const id = order.body.data.services[0].id as string;
    // Well inside the minute between passes.
    await eventually(async () => ["installing", "active"].includes((await service(c, id))?.status), 10_000);
  });

  it("issues one renewal a week before the paid-up date, pays it from credit, and extends by exactly one term", async () => {
    const c = await customer("100");
    const id = await activeService(c, await product({ monthly: "10.0000" }));
    const due = await dueOf(c, id);
    assert.equal(await balance(c), 90);
    await advanceTo(new Date(due.getTime() - 8 * DAY));
    assert.equal((await renewals(id)).length, 0, "not before the lead time");
    await advanceTo(new Date(due.getTime() - 7 * DAY));
    const issued = await renewals(id);
    assert.equal(issued.length, 1);
    assert.equal(issued[0].status, "paid", "paid from credit at issue");
    assert.equal(issued[0].total, "10.0000");
    assert.equal(issued[0].due_date.getTime(), due.getTime(), "due when the term starts");
    assert.equal(await balance(c), 80);
    const extended = await dueOf(c, id);
    assert.equal(extended.getUTCMonth(), (due.getUTCMonth() + 1) % 12, "one month on");
    assert.equal(extended.getUTCDate(), Math.min(due.getUTCDate(), extended.getUTCDate()));
    // Moving on inside the same term issues nothing more.
    await advanceTo(new Date(due.getTime() + 2 * DAY));
    assert.equal((await renewals(id)).length, 1, "once per term");
    assert.equal((await service(c, id)).status, "active");
    assert.deepEqual(await events(id), ["service.provisioned"], "no events for renewals");
    // The renewal invoice is a customer document like any other.
    const listed = await c.call("GET", "/invoices");
    assert.ok(listed.body.data.invoices.some((d: { id: string }) => d.id === issued[0].id));
  });

  it("suspends an unpaid service 3 days after its paid-up date, lifts it when credit lands, and refuses add-ons and upgrades meanwhile", async () => {
    const c = await customer("10");
    const productId = await product({ monthly: "10.0000" });
    const id = await activeService(c, productId);
    const bigger = await product({ monthly: "20.0000" });
    const due = await dueOf(c, id);
    await advanceTo(new Date(due.getTime() - 6 * DAY));
    const [open] = await renewals(id);
    assert.equal(open.status, "unpaid", "no credit: left open");
    const addonOption = (
      await billing.client.adminAddProductOption({
        productId,
        name: "IPv4",
        recurringMonthlyPrice: amountOf("2"),
      })
    ).option!.id;
    const buy = await c.call("POST", `/services/${id}/options`, {
      optionId: addonOption,
      billingType: "recurring",
      billingCycle: "monthly",
    });
    assert.equal(buy.status, 409, buy.text);
    assert.match(buy.body.error, /renewal/);
    await advanceTo(new Date(due.getTime() + 2 * DAY));
    assert.equal((await service(c, id)).status, "active", "inside the grace");
    const up = await c.call("POST", `/services/${id}/upgrades`, { toProductId: bigger });
    assert.equal(up.status, 409, `overdue: never upgraded for nothing: ${up.text}`);
    await advanceTo(new Date(due.getTime() + 3 * DAY));
    assert.equal((await service(c, id)).status, "suspended");
    await billing.client.adminAdjustCredit({
      personId: c.personId,
      customerId: c.customerId,
      amount: "10",
      currency: "EUR",
    });
    // Automatic payment was tried at issue and on the due date; credit that lands later pays the
    // open renewal by itself (issue 28 §3), without waiting for the next pass.
    await eventually(async () => (await service(c, id)).status === "active", 10_000);
    assert.equal((await renewals(id))[0].status, "paid");
    assert.equal(await balance(c), 0);
    const after = await service(c, id);
    const extended = new Date(after.billing.next_due_date);
    assert.ok(extended.getTime() > due.getTime() + 27 * DAY && extended.getTime() < due.getTime() + 32 * DAY);
    assert.deepEqual(await events(id), [
      "service.provisioned",
      "service.suspended:overdue",
      "service.unsuspended:renewal paid",
    ]);
  });

  it("terminates a service left unpaid 30 days after its paid-up date, cancelling the renewal and refunding nothing", async () => {
    const c = await customer("10");
    const id = await activeService(c, await product({ monthly: "10.0000" }));
    const due = await dueOf(c, id);
    await advanceTo(new Date(due.getTime() + 29 * DAY));
    assert.equal((await service(c, id)).status, "suspended");
    await advanceTo(new Date(due.getTime() + 30 * DAY));
    assert.equal((await service(c, id)).status, "terminated");
    assert.deepEqual(
      (await renewals(id)).map((d) => d.status),
      ["cancelled"],
    );
    assert.equal(await balance(c), 0);
    assert.deepEqual(await events(id), [
      "service.provisioned",
      "service.suspended:overdue",
      "service.terminated:overdue",
    ]);
  });

  it("does not renew a service cancelled at the end of its term, and renews it again once that is withdrawn", async () => {
    const c = await customer("100");
    const id = await activeService(c, await product({ monthly: "10.0000" }));
    const due = await dueOf(c, id);
    await advanceTo(new Date(due.getTime() - 10 * DAY));
    assert.equal(
      (await c.call("POST", `/services/${id}/cancel`, { reason: "r", immediate: false })).status,
      200,
    );
    await advanceTo(new Date(due.getTime() - 5 * DAY));
    assert.equal((await renewals(id)).length, 0, "no renewal document");
    assert.equal((await c.call("DELETE", `/services/${id}/cancel`)).status, 200);
    await advanceTo(new Date(due.getTime() - 4 * DAY));
    assert.deepEqual(
      (await renewals(id)).map((d) => d.status),
      ["paid"],
    );
  });

  it("/renew issues the next term early, and the cycle then does not issue that term again", async () => {
    const c = await customer("100");
    const id = await activeService(c, await product({ monthly: "10.0000" }));
    const due = await dueOf(c, id);
    const early = await c.call("POST", `/services/${id}/renew`);
    assert.equal(early.status, 200, early.text);
    assert.equal(early.body.data.invoice.status, "unpaid", "the customer asked for a document to pay");
    // (A second /renew while it is open answers 409: billing.test.ts, beside the renewal cool-down.)
    await advanceTo(new Date(due.getTime() - 6 * DAY));
    assert.equal((await renewals(id)).length, 1, "the term is not issued twice");
  });

  it("renews a recurring add-on on its own cycle at the current price", async () => {
    const c = await customer("200");
    const productId = await product({ annually: "100.0000" });
    const id = await activeService(c, productId, "annually");
    const option = (
      await billing.client.adminAddProductOption({
        productId,
        name: "Backups",
        recurringMonthlyPrice: amountOf("3"),
      })
    ).option!.id;
    const bought = await c.call("POST", `/services/${id}/options`, {
      optionId: option,
      billingType: "recurring",
      billingCycle: "monthly",
    });
    assert.equal(bought.status, 201, bought.text);
    const addonDue = new Date(bought.body.data.addon.next_due_date);
    await advanceTo(new Date(addonDue.getTime() - 7 * DAY));
    const docs = await renewals(id);
    assert.deepEqual(
      docs.map((d) => [d.purpose, d.status, d.total]),
      [["addon", "paid", "3.0000"]],
    );
    const [addon] = await db<{ next_due_date: Date; paid_amount: string }[]>`
      select next_due_date, paid_amount::text from service_addons where service_id = ${id}`;
    assert.equal(addon.paid_amount, "6.0000");
    assert.ok(addon.next_due_date.getTime() > addonDue.getTime() + 27 * DAY);
    assert.equal(await balance(c), 200 - 100 - 3 - 3);
  });

  it("keeps a service and its add-on on their anchor day: ordered on a 31st, due on the 31st again after a shorter month", async () => {
    // Issue 28 §2: each due date is the anchor + n cycles, never the previous clamped date + 1.
    const t = await now();
    const next31st = Array.from(
      { length: 14 },
      (_, m) => new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + m, 31, 12)),
    ).find(
      (d) =>
        d.getUTCDate() === 31 &&
        d > t &&
        new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 2, 0)).getUTCDate() < 31,
    );
    assert.ok(next31st);
    await advanceTo(next31st);
    const c = await customer("1000");
    const productId = await product({ monthly: "10.0000" });
    const id = await activeService(c, productId);
    const option = (
      await billing.client.adminAddProductOption({
        productId,
        name: "Backups",
        recurringMonthlyPrice: amountOf("3"),
      })
    ).option!.id;
    const bought = await c.call("POST", `/services/${id}/options`, {
      optionId: option,
      billingType: "recurring",
      billingCycle: "monthly",
    });
    assert.equal(bought.status, 201, bought.text);
    await billing.client.adminAdvanceClock({ seconds: BigInt(70 * 86_400) });
    const shortMonthEnd = new Date(
      Date.UTC(next31st.getUTCFullYear(), next31st.getUTCMonth() + 2, 0),
    ).getUTCDate();
    const days = (purpose: string) => async () =>
      (await renewals(id))
        .filter((d) => d.purpose === purpose)
        .map((d) => [d.status, d.due_date.getUTCDate()]);
    assert.deepEqual(await days("renewal")(), [
      ["paid", shortMonthEnd],
      ["paid", 31],
    ]);
    assert.deepEqual(await days("addon")(), [
      ["paid", shortMonthEnd],
      ["paid", 31],
    ]);
  });

  it("voids an upgrade invoice left unpaid past the date it was priced up to: paying it then answers 409", async () => {
    const c = await customer("30");
    const id = await activeService(c, await product({ monthly: "10.0000" }));
    const up = await c.call("POST", `/services/${id}/upgrades`, {
      toProductId: await product({ monthly: "40.0000" }),
    });
    assert.equal(up.status, 201, up.text);
    const invoice = up.body.data.document.id as string;
    assert.ok(up.body.data.document.total > 0, "priced, never free");
    const pricedUntil = await dueOf(c, id);
    await advanceTo(pricedUntil);
    const late = await c.call("POST", `/invoices/${invoice}/pay`, {});
    assert.equal(late.status, 409, late.text);
    const upgrade = await c.call("GET", `/upgrades/${up.body.data.id}`);
    assert.equal(upgrade.body.data.status, "cancelled");
    assert.equal((await c.call("GET", `/invoices/${invoice}`)).body.data.status, "cancelled");
  });

  it("hourly: hours while suspended are not charged, and next_due_date reads the next charge", async () => {
    const c = await customer("10");
    const hourly = await product({ hourly: "0.5000" }, "1");
    const order = await c.call("POST", "/orders", { productId: hourly, billingCycle: "hourly" });
    assert.equal(order.status, 201, order.text);
    const id = order.body.data.services[0].id as string;
    await eventually(async () => (await service(c, id))?.status === "active", 20_000);
    const t0 = await now();
    const first = await dueOf(c, id);
    assert.ok(Math.abs(first.getTime() - (t0.getTime() + 3_600_000)) < 120_000, "an hour after the order");
    await billing.client.adminSetServiceState({
      serviceId: id,
      action: ServiceAction.SUSPEND,
      reason: "check",
    });
    const before = await balance(c);
    await advanceTo(new Date(t0.getTime() + 5 * 3_600_000));
    assert.equal(await balance(c), before, "nothing charged while suspended");
    await billing.client.adminSetServiceState({
      serviceId: id,
      action: ServiceAction.UNSUSPEND,
      reason: "ok",
    });
    await eventually(async () => (await balance(c)) === before - 0.5, 10_000);
    const next = await dueOf(c, id);
    const resumed = await now();
    assert.ok(next.getTime() > resumed.getTime() && next.getTime() <= resumed.getTime() + 3_600_000 + 60_000);
    await billing.client.adminSetServiceState({
      serviceId: id,
      action: ServiceAction.TERMINATE,
      reason: "end",
    });
  });

  it("hourly: billing's suspension for want of credit is lifted once credit covers an hour, without charging the hours between", async () => {
    const c = await customer("1");
    const hourly = await product({ hourly: "0.5000" }, "1");
    const order = await c.call("POST", "/orders", { productId: hourly, billingCycle: "hourly" });
    assert.equal(order.status, 201, order.text);
    const id = order.body.data.services[0].id as string;
    await eventually(async () => (await service(c, id))?.status === "active", 20_000);
    const t0 = await now();
    await advanceTo(new Date(t0.getTime() + 2 * 3_600_000));
    assert.equal((await service(c, id)).status, "suspended", "the second hour could not be paid");
    assert.equal(await balance(c), 0);
    await advanceTo(new Date(t0.getTime() + 8 * 3_600_000));
    await billing.client.adminAdjustCredit({
      personId: c.personId,
      customerId: c.customerId,
      amount: "5",
      currency: "EUR",
    });
    await eventually(async () => (await service(c, id)).status === "active", 10_000);
    await eventually(async () => (await balance(c)) === 4.5, 10_000);
    await billing.client.adminAdjustCredit({
      personId: c.personId,
      customerId: c.customerId,
      amount: "0.0001",
      currency: "EUR",
    });
    assert.equal(await balance(c), 4.5001, "one hour from the lift, none for the six while suspended");
    await billing.client.adminSetServiceState({
      serviceId: id,
      action: ServiceAction.TERMINATE,
      reason: "end",
    });
  });

  it("issues and pays each term once when two replicas' due passes run at once", async () => {
    // Two more passes beside the stack's own billing (every 200 ms), as two replicas would run
    // them: each its own pool.
    const pools = [
      connectDb(s.stack.env.DATABASE_URL, "billing", 2),
      connectDb(s.stack.env.DATABASE_URL, "billing", 2),
    ];
    try {
      const c = await customer("1000");
      const productId = await product({ monthly: "10.0000" });
      const order = await c.call("POST", "/orders", {
        items: Array.from({ length: 6 }, (_, i) => ({
          productId,
          billingCycle: "monthly",
          hostname: `r${i}`,
        })),
      });
      assert.equal(order.status, 201, order.text);
      const ids: string[] = order.body.data.services.map((x: { id: string }) => x.id);
      for (const id of ids) await eventually(async () => (await service(c, id))?.status === "active", 20_000);
      // This process's passes read billing's time (the offset billing stored), and the lead time
      // makes the first term due now.
      const billingNow = await now();
      await startClock(pools[0]!, true, createLogger("billing-cycle-test"));
      const lead = Math.ceil(((await dueOf(c, ids[0])).getTime() - billingNow.getTime()) / DAY) + 1;
      await billing.client.adminUpdateBillingSettings({ renewalLeadDays: lead });
      await Promise.all(
        pools.flatMap((pool) => [0, 1].map(() => runRenewalCycle(pool, s.stack.env.HB_NS, "skip"))),
      );
      await eventually(async () => {
        for (const id of ids) if ((await renewals(id)).length === 0) return false;
        return true;
      }, 20_000);
      for (const id of ids)
        assert.deepEqual(
          (await renewals(id)).map((d) => d.status),
          ["paid"],
        );
      assert.equal(await balance(c), 1000 - 60 - 60, "each renewal charged once");
    } finally {
      await billing.client.adminUpdateBillingSettings({ renewalLeadDays: 7 });
      await Promise.all(pools.map((pool) => pool.end({ timeout: 5 })));
    }
  });

  // Issue 28 §3: credit that arrives after automatic payment gave up pays what is open.
  describe("credit that arrives late", () => {
    const credit = (c: Customer, amount: string) =>
      billing.client.adminAdjustCredit({
        personId: c.personId,
        customerId: c.customerId,
        amount,
        currency: "EUR",
      });

    it("pays the open renewals oldest first and lifts the overdue suspension; the service is never terminated", async () => {
      const c = await customer("20");
      const productId = await product({ monthly: "10.0000" });
      const first = await activeService(c, productId);
      const second = await activeService(c, productId);
      const due = await dueOf(c, first);
      await advanceTo(new Date(due.getTime() + 5 * DAY));
      assert.equal((await service(c, first)).status, "suspended", "unpaid past the grace");
      assert.equal((await service(c, second)).status, "suspended");
      // Enough for one renewal: the older one (the first service's) is paid.
      await credit(c, "10");
      await eventually(async () => (await service(c, first)).status === "active", 10_000);
      assert.deepEqual(
        (await renewals(first)).map((d) => d.status),
        ["paid"],
      );
      assert.equal((await service(c, second)).status, "suspended");
      assert.equal(await balance(c), 0);
      // The rest arrives: the second is paid too.
      await credit(c, "10");
      await eventually(async () => (await service(c, second)).status === "active", 10_000);
      assert.equal(await balance(c), 0);
      assert.deepEqual(await events(second), [
        "service.provisioned",
        "service.suspended:overdue",
        "service.unsuspended:renewal paid",
      ]);
    });

    it("a bank transfer confirmed by staff pays the open renewal too", async () => {
      const c = await customer("10");
      const id = await activeService(c, await product({ monthly: "10.0000" }));
      const due = await dueOf(c, id);
      await advanceTo(new Date(due.getTime() + 4 * DAY));
      assert.equal((await service(c, id)).status, "suspended");
      // As the portal's Add credit page and the staff's Bank transfers page call billing.
      const portal = stackClient(s.stack.env, [TopUpService], "BILLING_ADDR", 20_000, "portal");
      const staff = stackClient(s.stack.env, [TopUpStaffService], "BILLING_ADDR", 20_000);
      try {
        const asked = await portal.client.requestBankTransfer({
          caller: {
            customerId: c.customerId,
            personId: c.personId,
            currency: "EUR",
            permissions: ["pay_invoices"],
          },
          amount: "10",
          idempotencyKey: `late-${c.customerId}`,
        });
        await staff.client.confirmBankTransfer({
          reference: asked.topUp!.reference,
          receivedAmount: "10",
          staffId: "00000000-0000-0000-0000-000000000001",
        });
      } finally {
        portal.close();
        staff.close();
      }
      await eventually(async () => (await service(c, id)).status === "active", 10_000);
      assert.equal((await renewals(id))[0].status, "paid");
      assert.equal(await balance(c), 0);
    });

    it("pays a renewal whose automatic payment failed at issue as soon as credit lands, before its due date", async () => {
      const c = await customer("10");
      const id = await activeService(c, await product({ monthly: "10.0000" }));
      const due = await dueOf(c, id);
      await advanceTo(new Date(due.getTime() - 6 * DAY));
      assert.equal((await renewals(id))[0]?.status, "unpaid", "no credit at issue");
      await credit(c, "15");
      await eventually(async () => (await renewals(id))[0]?.status === "paid", 10_000);
      assert.equal(await balance(c), 5);
      assert.ok((await dueOf(c, id)).getTime() > due.getTime(), "extended by the payment");
      assert.deepEqual(await events(id), ["service.provisioned"]);
    });

    it("leaves the renewals of an account that pays by hand open", async () => {
      const c = await customer("10");
      const id = await activeService(c, await product({ monthly: "10.0000" }));
      await billing.client.adminSetAccountBilling({ customerId: c.customerId, autoPay: false });
      const due = await dueOf(c, id);
      await advanceTo(new Date(due.getTime() - 6 * DAY));
      await credit(c, "10");
      // A pass after the credit (a clock move runs one) leaves it open.
      await billing.client.adminAdvanceClock({ seconds: 1n });
      assert.equal((await renewals(id))[0]?.status, "unpaid");
      assert.equal(await balance(c), 10);
    });
  });

  // Issue 28 §1: the outcome never depends on how often the due pass ran. Each term is issued and
  // paid from credit before the next is judged overdue.
  describe("however time passes", () => {
    const advance = (days: number) => billing.client.adminAdvanceClock({ seconds: BigInt(days * 86_400) });
    const outcome = async (c: Customer, id: string) => ({
      status: (await service(c, id)).status,
      balance: await balance(c),
      renewals: (await renewals(id)).map((d) => `${d.status} ${d.total}`),
      events: await events(id),
    });

    it("400 days in one step end where 40 steps of 10 days do: 13 renewals paid, active, no events", async () => {
      const productId = await product({ monthly: "10.0000" });
      const once = await customer("1000");
      const onceId = await activeService(once, productId);
      await advance(400);
      const oneStep = await outcome(once, onceId);
      const inSteps = await customer("1000");
      const stepsId = await activeService(inSteps, productId);
      for (let i = 0; i < 40; i++) await advance(10);
      const expected = {
        status: "active",
        balance: 1000 - 10 - 13 * 10,
        renewals: Array.from({ length: 13 }, () => "paid 10.0000"),
        events: ["service.provisioned"],
      };
      assert.deepEqual(oneStep, expected, "one step");
      assert.deepEqual(await outcome(inSteps, stepsId), expected, "ten-day steps");
    });

    it("65 days in one step: a paid-up service is never suspended, so no suspended/unsuspended pair", async () => {
      const c = await customer("1000");
      const id = await activeService(c, await product({ monthly: "10.0000" }));
      await advance(65);
      assert.deepEqual(await outcome(c, id), {
        status: "active",
        balance: 1000 - 10 - 2 * 10,
        renewals: ["paid 10.0000", "paid 10.0000"],
        events: ["service.provisioned"],
      });
    });

    it("an annual service moved 375 days in one step is renewed", async () => {
      const c = await customer("1000");
      const id = await activeService(c, await product({ annually: "100.0000" }), "annually");
      const due = await dueOf(c, id);
      await advance(375);
      const after = await service(c, id);
      assert.equal(after.status, "active");
      assert.deepEqual(
        (await renewals(id)).map((d) => `${d.status} ${d.total}`),
        ["paid 100.0000"],
      );
      const next = new Date(after.billing.next_due_date);
      assert.equal(next.getUTCFullYear(), due.getUTCFullYear() + 1, "one year on");
      assert.deepEqual(await events(id), ["service.provisioned"]);
    });

    it("a service whose credit runs dry is suspended and terminated for its first unpaid term", async () => {
      // 25 credit: the order (10) and one renewal (10); the second renewal is left open.
      const c = await customer("25");
      const id = await activeService(c, await product({ monthly: "10.0000" }));
      await advance(120);
      const [, unpaid] = await renewals(id);
      assert.equal(
        unpaid?.status,
        "cancelled",
        `the unpaid term's renewal is cancelled at termination: ${JSON.stringify({ r: await renewals(id), e: await events(id), b: await balance(c), s: await service(c, id) })}`,
      );
      assert.equal((await service(c, id)).status, "terminated");
      assert.equal(await balance(c), 5);
      assert.deepEqual(await events(id), [
        "service.provisioned",
        "service.suspended:overdue",
        "service.terminated:overdue",
      ]);
    });
  });
});
