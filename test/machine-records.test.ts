import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { connectDb } from "@hb/platform";
import { cyclePrices, eventually, kindOf } from "./helpers.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { billingClock } from "./support/billing-clock.ts";
import { stackClient } from "./support/clients.ts";
import { activeService, type StackCustomer, stackCustomer } from "./support/stack-customer.ts";
import { metricsText, sample } from "./support/stack-output.ts";

// Issue 31 §1: the VPS pages come from compute's copy of billing's service records. After every
// kind of change billing makes to a service, the VPS list and detail show what billing itself
// shows (GET /services/{id}); after a change the customer made, at once (read-your-writes).
describe("the VPS pages follow billing's record of each service", () => {
  let s: OwnStack;
  let billing: ReturnType<typeof stackClient<[typeof BillingService, typeof BillingStaffService]>>;
  const DAY = 86_400_000;

  const { advanceTo } = billingClock(() => billing.client);
  const product = async (monthly: string) =>
    (
      await billing.client.adminCreateProduct({
        name: `records ${monthly} ${Date.now()}`,
        kind: kindOf("vps"),
        prices: cyclePrices({ monthly }),
        currency: "EUR",
        osImages: ["debian-12"],
      })
    ).product!.id;

  /** The spec's VPS status of a billing status (the mapper's rule, restated). */
  const vpsStatus = (status: string) =>
    status === "active" || status === "suspended"
      ? status
      : status === "terminated" || status === "cancelled"
        ? "terminated"
        : "pending";

  /**
   * What is wrong with c's VPS pages against billing's own answers for `ids` (empty when
   * nothing): each service's list record and detail carry billing's name, product, billing
   * terms, cancellation, creation time and (folded) status.
   */
  async function mismatches(c: StackCustomer, ids: string[]): Promise<string[]> {
    const list = await c.call("GET", "/vps?limit=50");
    assert.equal(list.status, 200, list.text);
    const wrong: string[] = [];
    for (const id of ids) {
      const [svc, detail] = await Promise.all([
        c.call("GET", `/services/${id}`),
        c.call("GET", `/vps/${id}`),
      ]);
      assert.equal(svc.status, 200, svc.text);
      assert.equal(detail.status, 200, detail.text);
      const b = svc.body.data;
      const want = {
        id,
        name: b.name,
        status: vpsStatus(b.status),
        product: b.product,
        billing: b.billing,
        cancellation: b.cancellation,
        created_at: b.created_at,
      };
      const pick = (r: Record<string, unknown>) =>
        Object.fromEntries(Object.keys(want).map((k) => [k, r[k]])) as typeof want;
      const listed = list.body.data.find((r: { id: string }) => r.id === id);
      if (!listed) wrong.push(`${id} not listed`);
      else if (JSON.stringify(pick(listed)) !== JSON.stringify(want))
        wrong.push(`list ${JSON.stringify(pick(listed))} != billing ${JSON.stringify(want)}`);
      if (JSON.stringify(pick(detail.body.data)) !== JSON.stringify(want))
        wrong.push(`detail ${JSON.stringify(pick(detail.body.data))} != billing ${JSON.stringify(want)}`);
    }
    return wrong;
  }
  /** Right now, with no wait: what the customer just did shows on their next read. */
  const matchesNow = async (c: StackCustomer, ids: string[], step: string) =>
    assert.deepEqual(await mismatches(c, ids), [], step);
  const statusOf = async (c: StackCustomer, id: string) =>
    (await c.call("GET", `/services/${id}`)).body.data.status;

  /** RPCs a service has answered, by method, from its metrics. */
  async function handled(service: "billing" | "compute" | "auth"): Promise<Map<string, number>> {
    const port = s.stack.env[`${service.toUpperCase()}_METRICS_PORT`];
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const calls = new Map<string, number>();
    for (const l of text.split("\n")) {
      if (!l.startsWith("rpc_server_handled_total{")) continue;
      const method = /method="([^"]+)"/.exec(l)?.[1] ?? "";
      if (method.startsWith("/grpc.health")) continue;
      calls.set(method, (calls.get(method) ?? 0) + Number(l.split(" ").at(-1)));
    }
    return calls;
  }
  const delta = (was: Map<string, number>, is: Map<string, number>) =>
    Object.fromEntries(
      [...is].filter(([m, n]) => n !== (was.get(m) ?? 0)).map(([m, n]) => [m, n - (was.get(m) ?? 0)]),
    );

  before(async () => {
    s = await ownStack("records", { BILLING_CLOCK_CONTROL: "true", PROVISIONER_INTERVAL_MS: "60000" });
    billing = stackClient(s.stack.env, [BillingService, BillingStaffService], "BILLING_ADDR", 60_000);
  });
  after(async () => {
    billing?.close();
    await s?.close();
  });

  it("GET /vps is one call to compute and none to billing, whatever the page", async () => {
    const c = await stackCustomer(s, billing.client, "RecordsCount", "30");
    const small = await product("10.0000");
    const ids = [await activeService(c, small), await activeService(c, small)];
    await eventually(async () => (await mismatches(c, ids)).length === 0, 5_000);
    const target = await c.call("GET", `/vps/${ids[0]}`);
    assert.equal(target.status, 200);
    const [billingBefore, computeBefore] = await Promise.all([handled("billing"), handled("compute")]);
    const page = await c.call("GET", "/vps?limit=50");
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.data.length, 2);
    const [billingAfter, computeAfter] = await Promise.all([handled("billing"), handled("compute")]);
    assert.deepEqual(delta(billingBefore, billingAfter), {}, "billing is not asked");
    assert.deepEqual(delta(computeBefore, computeAfter), {
      "/hb.compute.v1.ComputeService/ListMachineRecords": 1,
    });
    const one = await c.call("GET", `/vps/${ids[0]}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.data, target.body.data);
    const [billingLast, computeLast] = await Promise.all([handled("billing"), handled("compute")]);
    assert.deepEqual(delta(billingAfter, billingLast), {}, "billing is not asked for one VPS either");
    assert.deepEqual(delta(computeAfter, computeLast), {
      "/hb.compute.v1.ComputeService/GetMachineRecord": 1,
    });
  });

  it("a page read again unchanged is the gateway's held page, and a change to a record, a machine or an address shows on the next read", async () => {
    const c = await stackCustomer(s, billing.client, "RecordsHeld", "30");
    const id = await activeService(c, await product("10.0000"));
    const listed = async () => {
      const page = await c.call("GET", "/vps?limit=50");
      assert.equal(page.status, 200, page.text);
      return page.body.data.find((r: { id: string }) => r.id === id);
    };
    const reads = async () => {
      const text = await metricsText(s, "gateway");
      const n = (outcome: string) => sample(text, "gateway_machine_page_reads_total", { outcome }) ?? 0;
      return { held: n("held"), read: n("read") };
    };
    // The build's last writes have landed once the page shows them: compute's (state, addresses),
    // and billing's record, which turns active when billing has applied the build's report (from
    // the stream, after the machine runs).
    await eventually(async () => {
      const row = await listed();
      return row?.instance?.state === "running" && row.status === "active";
    }, 20_000);
    const first = await listed();
    const was = await reads();
    assert.deepEqual(await listed(), first);
    assert.deepEqual(
      await reads(),
      { held: was.held + 1, read: was.read },
      "the second read is the held page",
    );

    // Written to compute's tables as any of their writers would (a job, a reconcile, staff's tools).
    const sql = connectDb(s.stack.env.DATABASE_URL, "compute", 1);
    try {
      await sql`update machines set hostname = 'renamed.example' where service_id = ${id}`;
      assert.equal((await listed()).hostname, "renamed.example", "a machine's change");
      await sql`insert into ip_addresses (service_id, address, version, prefix_length, purpose)
                values (${id}, '198.18.9.9', 4, 32, 'additional')`;
      const added = (await listed()).ip_addresses.find(
        (a: { address: string }) => a.address === "198.18.9.9",
      );
      assert.deepEqual(added, {
        address: "198.18.9.9",
        version: 4,
        prefix_length: 32,
        purpose: "additional",
      });
      await sql`update ip_addresses set prefix_length = 31 where service_id = ${id} and address = '198.18.9.9'`;
      assert.ok(
        (await listed()).ip_addresses.some(
          (a: { address: string; prefix_length: number }) =>
            a.address === "198.18.9.9" && a.prefix_length === 31,
        ),
        "an address's change",
      );
      await sql`delete from ip_addresses where service_id = ${id} and address = '198.18.9.9'`;
      assert.ok(
        !(await listed()).ip_addresses.some((a: { address: string }) => a.address === "198.18.9.9"),
        "an address's removal",
      );
      // A write that changes nothing leaves the page held.
      await listed();
      const before = await reads();
      await sql`update machines set hostname = hostname where service_id = ${id}`;
      await listed();
      assert.equal((await reads()).held, before.held + 1, "a write that changes nothing");
    } finally {
      await sql.end();
    }

    // Billing's change, made by the customer: on the next read (read-your-writes).
    const cancel = await c.call("POST", `/services/${id}/cancel`, { reason: "held", immediate: false });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal((await listed()).cancellation?.reason, "held", "a record's change");
  });

  it("after an order, its payment and build, a cancellation and its withdrawal, an upgrade, renewals, overdue suspension, unsuspension and termination", async () => {
    const small = await product("10.0000");
    const big = await product("20.0000");
    const a = await stackCustomer(s, billing.client, "RecordsA", "100");
    const b = await stackCustomer(s, billing.client, "RecordsB", "10");
    const c = await stackCustomer(s, billing.client, "RecordsC", "0");

    // An order paid from credit at once: shown as billing has it in the 201's next read.
    const order = await a.call("POST", "/orders", { productId: small, billingCycle: "monthly" });
    assert.equal(order.status, 201, order.text);
    const s1 = order.body.data.services[0].id as string;
    await matchesNow(a, [s1], "order placed and paid");
    // An order left unpaid (no credit) is listed too, pending payment.
    const unpaid = await c.call("POST", "/orders", { productId: small, billingCycle: "monthly" });
    assert.equal(unpaid.status, 201, unpaid.text);
    const s3 = unpaid.body.data.services[0].id as string;
    await matchesNow(c, [s3], "order unpaid");
    // Its proforma paid later (order.paid by a payment).
    await c.credit("10");
    const proforma = unpaid.body.data.proforma?.id;
    assert.ok(proforma, unpaid.text);
    const pay = await c.call("POST", `/proformas/${proforma}/pay`, {});
    assert.equal(pay.status, 200, pay.text);
    await matchesNow(c, [s3], "order paid later");
    // Provisioning reports arrive through events: shown once billing has them.
    await eventually(async () => (await statusOf(a, s1)) === "active", 20_000);
    await eventually(async () => (await mismatches(a, [s1])).length === 0, 5_000);
    await eventually(async () => (await statusOf(c, s3)) === "active", 20_000);
    await eventually(async () => (await mismatches(c, [s3])).length === 0, 5_000);
    const s2 = await activeService(b, small);
    await eventually(async () => (await mismatches(b, [s2])).length === 0, 5_000);

    // Cancellation at the end of the term, then withdrawn.
    const cancel = await a.call("POST", `/services/${s1}/cancel`, { reason: "testing", immediate: false });
    assert.equal(cancel.status, 200, cancel.text);
    await matchesNow(a, [s1], "cancellation requested");
    assert.notEqual((await a.call("GET", `/vps/${s1}`)).body.data.cancellation, null);
    const withdraw = await a.call("DELETE", `/services/${s1}/cancel`);
    assert.equal(withdraw.status, 200, withdraw.text);
    await matchesNow(a, [s1], "cancellation withdrawn");

    // An upgrade to a dearer product, paid: product and price change.
    const upgrade = await a.call("POST", `/services/${s1}/upgrades`, { toProductId: big });
    assert.equal(upgrade.status, 201, upgrade.text);
    const paid = await a.call("POST", `/invoices/${upgrade.body.data.document.id}/pay`, {});
    assert.equal(paid.status, 200, paid.text);
    await matchesNow(a, [s1], "upgrade paid");
    assert.equal((await a.call("GET", `/vps/${s1}`)).body.data.product.id, big);

    // The renewal run: a's renewal is paid from credit (next due date moves on); b and c have
    // no credit left, so theirs stay open, and 3 days past due both are suspended.
    const due = new Date((await a.call("GET", `/services/${s1}`)).body.data.billing.next_due_date);
    const before = (await a.call("GET", `/vps/${s1}`)).body.data.billing.next_due_date;
    await advanceTo(new Date(due.getTime() - 7 * DAY));
    await matchesNow(a, [s1], "renewal paid");
    assert.notEqual((await a.call("GET", `/vps/${s1}`)).body.data.billing.next_due_date, before);
    const lastDue = Math.max(
      ...(await Promise.all(
        [
          [b, s2],
          [c, s3],
        ].map(async ([who, id]) =>
          Date.parse(
            (
              await (who as StackCustomer).call("GET", `/services/${id}`)
            ).body.data.billing.next_due_date,
          ),
        ),
      )),
    );
    await advanceTo(new Date(lastDue + 4 * DAY));
    assert.equal(await statusOf(b, s2), "suspended");
    await matchesNow(b, [s2], "overdue suspension");
    await matchesNow(c, [s3], "overdue suspension");

    // Credit lands: b's renewal is paid and the suspension lifted (by billing's own work, after
    // the credit: shown once billing has it).
    await b.credit("10");
    await eventually(async () => (await statusOf(b, s2)) === "active", 10_000);
    await eventually(async () => (await mismatches(b, [s2])).length === 0, 5_000);

    // Left unpaid 30 days past due: c's service is terminated.
    await advanceTo(new Date(lastDue + 31 * DAY));
    assert.equal(await statusOf(c, s3), "terminated");
    await matchesNow(c, [s3], "terminated");
    await matchesNow(a, [s1], "after the month");
    await matchesNow(b, [s2], "after the month");

    // The copy's lag is in compute's metrics, by how each record arrived.
    const metrics = await (
      await fetch(`http://127.0.0.1:${s.stack.env.COMPUTE_METRICS_PORT}/metrics`)
    ).text();
    for (const via of ["rpc", "stream"]) {
      const count = metrics
        .split("\n")
        .find((l) => l.startsWith("compute_service_record_lag_seconds_count{") && l.includes(`via="${via}"`));
      assert.ok(Number(count?.split(" ").at(-1)) > 0, `records applied via ${via}: ${count}`);
    }
  });
});
