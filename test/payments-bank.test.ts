import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { TopUpStaffService, TopUpStatus } from "@hb/contracts/hb/billing/v1/payments_pb";
import { resolveError } from "@hb/platform";
import { api, auth, GATEWAY, grpc } from "./helpers.ts";
import { csrfIn, portalMember, portalOwner, signInVisitor, staffMember } from "./portal-pages.ts";
import { serviceSql } from "./support/service-db.ts";
import { deliver, sign } from "./support/stripe-stand-in.ts";

// Bank transfer top-ups on the shared stack, which has no card provider configured.

const staffBilling = grpc([TopUpStaffService], "BILLING_ADDR");

describe("bank transfer top-ups", () => {
  const sql = serviceSql("billing");
  let owner: Awaited<ReturnType<typeof portalOwner>>;
  let key = "";
  let customer: Awaited<ReturnType<typeof signInVisitor>>;
  let editor: { staffId: string; email: string };
  let admin: Awaited<ReturnType<typeof signInVisitor>>;

  before(async () => {
    owner = await portalOwner();
    key = (
      await auth.createKey({ personId: owner.ownerId, label: "t", scopes: ["billing"], ipAllowlist: "" })
    ).secretKey;
    customer = await signInVisitor(GATEWAY, "portal", owner.email);
    editor = await staffMember(["view_clients", "edit_clients"]);
    admin = await signInVisitor(GATEWAY, "admin", editor.email);
  });
  after(async () => {
    await sql.end({ timeout: 5 });
  });

  const balance = async () => {
    const r = await api("GET", "/api/v1/account/balance", { key });
    assert.equal(r.status, 200, r.text);
    return r.body.data.balance as number;
  };

  const formOf = (html: string, action: string) => {
    const at = html.indexOf(`action="${action}"`);
    assert.ok(at > 0, `a form posting to ${action}`);
    return { _csrf: csrfIn(html), _once: /name="_once" value="([^"]+)"/.exec(html.slice(at))?.[1] ?? "" };
  };

  /** Asks for a transfer in the portal; returns its reference and the page's form fields. */
  async function requestTransfer(amount: string) {
    const page = await customer.get("/portal/add-credit");
    assert.equal(page.status, 200);
    const fields = formOf(page.text, "/portal/add-credit/bank");
    const r = await customer.post("/portal/add-credit/bank", { ...fields, "bank-amount": amount });
    assert.equal(r.status, 303, r.text);
    const shown = await customer.get(r.location);
    assert.equal(shown.status, 200);
    const reference = /HB-[0-9A-Z]{4}-[0-9A-Z]{4}/.exec(shown.text)?.[0];
    assert.ok(reference, "the page shows the reference");
    return { reference, fields, location: r.location, text: shown.text };
  }

  it("offers no card payment while no card provider is configured, and the webhook endpoint is not there", async () => {
    const page = await customer.get("/portal/add-credit");
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /Pay by card/);
    assert.match(page.text, /Bank transfer/);
    const body = JSON.stringify({ id: "evt_1", object: "event", type: "checkout.session.completed" });
    const r = await deliver(GATEWAY, { payload: body, signature: sign(body) });
    assert.deepEqual([r.status, r.body?.code], [404, "NOT_FOUND"]);
  });

  it("gives the customer a reference and the bank's details, once per form", async () => {
    const t = await requestTransfer("50");
    assert.match(t.text, /IBAN/);
    assert.match(t.text, /50\.00 EUR/);
    // The same form sent again (a double click, a reload) asks for no second transfer.
    const again = await customer.post("/portal/add-credit/bank", { ...t.fields, "bank-amount": "50" });
    assert.equal(again.status, 303);
    const [{ n }] = await sql<{ n: number }[]>`
      select count(*)::int as n from billing.top_ups where person_id = ${owner.ownerId} and request_key = ${t.fields._once}`;
    assert.equal(n, 1);
  });

  it("puts a refused amount beside its field", async () => {
    for (const amount of ["abc", "1", "10000.01", "5.123456"]) {
      const page = await customer.get("/portal/add-credit");
      const r = await customer.post("/portal/add-credit/bank", {
        ...formOf(page.text, "/portal/add-credit/bank"),
        "bank-amount": amount,
      });
      assert.equal(r.status, 400, amount);
      assert.match(
        r.text,
        /id="f-bank-amount-error"[^>]*>amount must be a decimal from 5\.00 EUR to 10000\.00 EUR/,
        amount,
      );
      assert.match(r.text, new RegExp(`value="${amount.replace(".", "\\.")}"`), "what was typed is kept");
    }
  });

  it("credits what staff confirm received, once, with the staff member on the ledger entry", async () => {
    const before = await balance();
    const t = await requestTransfer("100");
    const list = await admin.get("/admin/bank-transfers");
    assert.equal(list.status, 200);
    assert.ok(list.text.includes(t.reference), "the pending transfer is listed with its reference");
    const r = await admin.post("/admin/bank-transfers/confirm", {
      _csrf: csrfIn(list.text),
      reference: t.reference,
      received: "99.50",
    });
    assert.equal(r.status, 303, r.text);
    assert.equal(await balance(), before + 99.5);
    const again = await admin.post("/admin/bank-transfers/confirm", {
      _csrf: csrfIn(list.text),
      reference: t.reference,
      received: "99.50",
    });
    assert.equal(again.status, 409);
    assert.match(again.text, /already confirmed/);
    assert.equal(await balance(), before + 99.5);
    const [row] = await sql<
      { requested: string; received: string; confirmed_by: string; staff_id: string }[]
    >`
      select t.requested::text, t.received::text, t.confirmed_by::text, l.staff_id::text
      from billing.top_ups t join billing.ledger l on l.id = t.ledger_id where t.reference = ${t.reference}`;
    assert.deepEqual(row, {
      requested: "100.0000",
      received: "99.5000",
      confirmed_by: editor.staffId,
      staff_id: editor.staffId,
    });
    const shown = await customer.get(t.location.replace(/\?.*/, ""));
    assert.match(shown.text, /99\.50 EUR/);
  });

  it("credits once when several staff confirm the same transfer at the same moment", async () => {
    const before = await balance();
    const t = await requestTransfer("30");
    const second = await staffMember(["view_clients", "edit_clients"]);
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        staffBilling
          .confirmBankTransfer({
            reference: t.reference.toLowerCase(),
            receivedAmount: "30",
            staffId: i % 2 ? editor.staffId : second.staffId,
          })
          .then(
            () => "credited",
            (err: unknown) => resolveError(err).code,
          ),
      ),
    );
    assert.deepEqual(outcomes.sort(), [
      "CONFLICT",
      "CONFLICT",
      "CONFLICT",
      "CONFLICT",
      "CONFLICT",
      "credited",
    ]);
    assert.equal(await balance(), before + 30);
  });

  it("shows view-only staff no confirm button and refuses their post", async () => {
    const t = await requestTransfer("20");
    const viewer = await staffMember(["view_clients"]);
    const v = await signInVisitor(GATEWAY, "admin", viewer.email);
    const list = await v.get("/admin/bank-transfers");
    assert.equal(list.status, 200);
    assert.ok(list.text.includes(t.reference));
    assert.doesNotMatch(list.text, /Confirm received/);
    const before = await balance();
    const r = await v.post("/admin/bank-transfers/confirm", {
      _csrf: csrfIn(list.text),
      reference: t.reference,
      received: "20",
    });
    assert.equal(r.status, 403);
    assert.equal(await balance(), before);
    const { transfers } = await staffBilling.listBankTransfers({
      status: TopUpStatus.PENDING,
      page: 1,
      limit: 200,
    });
    assert.ok(
      transfers.some((x) => x.reference === t.reference),
      "still pending",
    );
  });

  it("refuses a team member without Pay Invoices, and a suspended account's request", async () => {
    const member = await portalMember(owner.customerId, ["view_billing", "view_invoices"]);
    const m = await signInVisitor(GATEWAY, "portal", member.email);
    assert.equal((await m.get("/portal/add-credit")).status, 403);

    const other = await portalOwner();
    const o = await signInVisitor(GATEWAY, "portal", other.email);
    const page = await o.get("/portal/add-credit");
    await auth.setCustomerStatus({ customerId: other.customerId, status: CustomerStatus.SUSPENDED });
    const r = await o.post("/portal/add-credit/bank", {
      ...formOf(page.text, "/portal/add-credit/bank"),
      "bank-amount": "50",
    });
    assert.equal(r.status, 403);
    const [{ n }] = await sql<
      { n: number }[]
    >`select count(*)::int as n from billing.top_ups where person_id = ${other.ownerId}`;
    assert.equal(n, 0);
  });
});
