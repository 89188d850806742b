import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { amountOf, cyclePrices, eventually, kindOf, billing as sharedBilling } from "./helpers.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { stackClient } from "./support/clients.ts";

// Billing on a private stack: a fresh ledger (its ids start at 1, so ordering across 9 → 10 shows),
// and time-driven billing (end-of-term cancellations, hourly charges) moved through billing's
// injectable clock without any other test file seeing the jump.
describe("billing on a private stack", () => {
  let s: OwnStack;
  let billing: ReturnType<typeof stackClient<[typeof BillingService, typeof BillingStaffService]>>;
  let key = "";
  let personId = "";
  let customerId = "";
  const call = (method: string, path: string, body?: unknown) => s.call(method, path, key, body);
  const advance = async (seconds: number) => billing.client.adminAdvanceClock({ seconds: BigInt(seconds) });
  const product = async (prices: Record<string, string>, minCredit = "") =>
    (
      await billing.client.adminCreateProduct({
        name: `plan ${Object.keys(prices).join("/")} ${Date.now()}`,
        kind: kindOf("vps"),
        prices: cyclePrices(prices),
        currency: "EUR",
        osImages: ["debian-12"],
        minimumCredit: minCredit ? amountOf(minCredit) : undefined,
      })
    ).product!.id;
  const balance = async () => (await call("GET", "/account/balance")).body.data.balance as number;

  before(async () => {
    // A pass every few milliseconds: a clock move then often lands while a pass is in flight, the
    // race that once let an advance return before the hours it covered were charged.
    s = await ownStack("clock", { BILLING_CLOCK_CONTROL: "true", HOURLY_CHARGE_INTERVAL_MS: "5" });
    billing = stackClient(s.stack.env, [BillingService, BillingStaffService], "BILLING_ADDR", 20_000);
    const { customer, owner } = await s.auth.createCustomer({
      name: "Clock",
      email: "clock@example.test",
      currency: "EUR",
    });
    customerId = customer!.id;
    personId = owner!.id;
    key = (
      await s.auth.createKey({
        personId,
        label: "k",
        scopes: ["services", "orders", "billing", "destructive"],
        ipAllowlist: "",
      })
    ).secretKey;
    await billing.client.adminAdjustCredit({ personId, customerId, amount: "500", currency: "EUR" });
  });
  after(async () => {
    billing?.close();
    await s?.close();
  });

  it("lists transactions newest first by number, and pages without gaps or repeats", async () => {
    // The ledger's first entry is the top-up made in before(); these make ids 2 … 12.
    for (let i = 2; i <= 12; i++) {
      await billing.client.adminAdjustCredit({ personId, customerId, amount: `${i}`, currency: "EUR" });
    }
    const all = await call("GET", "/account/transactions?limit=200");
    const ids: number[] = all.body.data.transactions.map((t: { id: string }) => Number(t.id));
    assert.equal(ids.length, 12);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
    assert.equal(all.body.data.transactions[0].amount, 12, "the newest entry first");
    const page1 = await call("GET", "/account/transactions?limit=5&page=1");
    const page2 = await call("GET", "/account/transactions?limit=5&page=2");
    assert.deepEqual(
      [...page1.body.data.transactions, ...page2.body.data.transactions].map((t: { id: string }) =>
        Number(t.id),
      ),
      ids.slice(0, 10),
    );
  });

  it("carries out an end-of-term cancellation at the paid-up date, refunds nothing, and stops renewals", async () => {
    const order = await call("POST", "/orders", {
      productId: await product({ monthly: "30.0000" }),
      billingCycle: "monthly",
    });
    assert.equal(order.status, 201, order.text);
    const id = order.body.data.services[0].id;
    await eventually(
      async () => (await call("GET", `/services/${id}`)).body.data?.status === "active",
      20_000,
    );
    const scheduled = await call("POST", `/services/${id}/cancel`, { reason: "moving", immediate: false });
    assert.equal(scheduled.status, 200, scheduled.text);
    const renew = await call("POST", `/services/${id}/renew`);
    assert.equal(renew.status, 409, renew.text);
    const paidBefore = await balance();
    await advance(10 * 86_400);
    assert.equal(
      (await call("GET", `/services/${id}`)).body.data.status,
      "active",
      "still inside the paid term",
    );
    await advance(25 * 86_400);
    const ended = await call("GET", `/services/${id}`);
    assert.equal(ended.body.data.status, "terminated");
    assert.equal(await balance(), paidBefore, "the term was used in full: nothing to give back");
  });

  it("charges each hour that passes from credit, without a document", async () => {
    const id = await product({ hourly: "0.5000" }, "1");
    const before = await balance();
    const documents = async () =>
      (await call("GET", "/invoices")).body.data.pagination.total +
      (await call("GET", "/proformas")).body.data.pagination.total;
    const documentsBefore = await documents();
    const order = await call("POST", "/orders", { productId: id, billingCycle: "hourly" });
    assert.equal(order.status, 201, order.text);
    assert.equal(await balance(), before - 0.5, "the first hour at once");
    await advance(3 * 3_600 + 60);
    assert.equal(await balance(), before - 2, "three more hours");
    assert.equal(await documents(), documentsBefore);
  });

  it("keeps its moved time, and what is due by it, when billing restarts", async () => {
    await advance(2 * 86_400);
    // A customer of its own, so the hourly service above does not count in this balance.
    const { customer, owner } = await s.auth.createCustomer({
      name: "Restart",
      email: "restart@example.test",
      currency: "EUR",
    });
    const own = { personId: owner!.id, customerId: customer!.id };
    const ownKey = (
      await s.auth.createKey({
        personId: own.personId,
        label: "k",
        scopes: ["orders", "billing"],
        ipAllowlist: "",
      })
    ).secretKey;
    await billing.client.adminAdjustCredit({ ...own, amount: "20", currency: "EUR" });
    const ownBalance = async () =>
      (await s.call("GET", "/account/balance", ownKey)).body.data.balance as number;
    const order = await s.call("POST", "/orders", ownKey, {
      productId: await product({ hourly: "0.5000" }, "1"),
      billingCycle: "hourly",
    });
    assert.equal(order.status, 201, order.text);
    assert.equal(await ownBalance(), 19.5, "the first hour at once");
    const moved = timestampDate((await advance(0)).now!);
    assert.ok(moved.getTime() > Date.now() + 86_400_000, "moved at least two days on");

    await s.stack.restart("billing");

    const after = timestampDate((await advance(0)).now!);
    assert.ok(
      after >= moved,
      `billing's time went back from ${moved.toISOString()} to ${after.toISOString()}`,
    );
    await advance(3_600 + 60);
    assert.equal(await ownBalance(), 19, "the next hour charged once, an hour after the first");
  });

  it("is not served by a billing started without clock control", async () => {
    await assert.rejects(sharedBilling.adminAdvanceClock({ seconds: 60n }), (err) => {
      assert.equal(ConnectError.from(err).code, Code.Unimplemented);
      return true;
    });
  });
});
