import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { StaffActionOutcome } from "@hb/contracts/hb/auth/v1/staff_audit_pb";
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

  const balance = async (k = key) => {
    const r = await api("GET", "/api/v1/account/balance", { key: k });
    assert.equal(r.status, 200, r.text);
    return r.body.data.balance as number;
  };

  const formOf = (html: string, action: string) => {
    const at = html.indexOf(`action="${action}"`);
    assert.ok(at > 0, `a form posting to ${action}`);
    return { _csrf: csrfIn(html), _once: /name="_once" value="([^"]+)"/.exec(html.slice(at))?.[1] ?? "" };
  };

  /**
   * A customer of its own, signed in, with a key to read the balance: a test asking for more
   * transfers stays within the Add credit cool-down of the shared owner.
   */
  async function ownCustomer() {
    const o = await portalOwner();
    const k = (
      await auth.createKey({ personId: o.ownerId, label: "t", scopes: ["billing"], ipAllowlist: "" })
    ).secretKey;
    const v = await signInVisitor(GATEWAY, "portal", o.email);
    return { ...o, v, balance: () => balance(k) };
  }

  /** Asks for a transfer in the portal; returns its reference and the page's form fields. */
  async function requestTransfer(amount: string, v = customer) {
    const page = await v.get("/portal/add-credit");
    assert.equal(page.status, 200);
    const fields = formOf(page.text, "/portal/add-credit/bank");
    const r = await v.post("/portal/add-credit/bank", { ...fields, "bank-amount": amount });
    assert.equal(r.status, 303, r.text);
    const shown = await v.get(r.location);
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

  it("files a confirmed transfer's audit row under the transfer's customer, never the one the form names", async () => {
    const own = await ownCustomer();
    const t = await requestTransfer("40", own.v);
    const other = await portalOwner();
    const list = await admin.get("/admin/bank-transfers");
    const r = await admin.post("/admin/bank-transfers/confirm", {
      _csrf: csrfIn(list.text),
      reference: t.reference,
      received: "40",
      customer: other.customerId,
    });
    assert.equal(r.status, 303, r.text);
    const filed = async (customerId: string) =>
      (await auth.listStaffActions({ customerId, limit: 200 })).actions
        .filter((a) => a.action === "billing.bank_transfer_confirm" && a.target === t.reference)
        .map((a) => a.outcome);
    assert.deepEqual(await filed(own.customerId), [StaffActionOutcome.SUCCEEDED]);
    assert.deepEqual(await filed(other.customerId), []);
  });

  it("bounds a confirmation by the currency's decimals and the top-up maximum, and credits more than asked only as an approved overpayment", async () => {
    const own = await ownCustomer();
    const t = await requestTransfer("50", own.v);
    const list = await admin.get("/admin/bank-transfers");
    const form = list.text.slice(list.text.indexOf(`value="${t.reference}"`));
    assert.match(form, /name="received"[^>]*value=""/, "the amount received is asked for, not filled in");
    assert.doesNotMatch(
      form.slice(0, form.indexOf("</form>")),
      /above_requested/,
      "no override without the permission",
    );
    const before = await own.balance();
    const refused = async (v: typeof admin, received: string, extra: Record<string, string> = {}) => {
      const page = await v.get("/admin/bank-transfers");
      const r = await v.post("/admin/bank-transfers/confirm", {
        _csrf: csrfIn(page.text),
        reference: t.reference,
        received,
        ...extra,
      });
      return { status: r.status, error: /class="error"[^>]*>([^<]+)</.exec(r.text)?.[1] ?? "" };
    };
    assert.deepEqual(await refused(admin, ""), {
      status: 400,
      error: "Enter the amount the bank statement shows",
    });
    assert.match((await refused(admin, "49.999")).error, /EUR amounts have at most 2 decimals/);
    assert.match((await refused(admin, "1000000")).error, /above the top-up maximum of 10,?000\.00 EUR/);
    assert.match((await refused(admin, "60")).error, /more than the 50\.00 EUR asked for/);
    const noRight = await refused(admin, "60", { above_requested: "1" });
    assert.equal(noRight.status, 403);
    assert.match(noRight.error, /Approve overpayments/);
    // Past the maximum even with the override, as the admin command would send it.
    assert.equal(
      await staffBilling
        .confirmBankTransfer({ reference: t.reference, receivedAmount: "10000.01", aboveRequested: true })
        .then(
          () => "credited",
          (err: unknown) => resolveError(err).code,
        ),
      "BAD_REQUEST",
    );
    assert.equal(await own.balance(), before, "nothing credited by a refused confirmation");

    const approver = await staffMember(["view_clients", "edit_clients", "approve_overpayments"]);
    const a = await signInVisitor(GATEWAY, "admin", approver.email);
    const page = await a.get("/admin/bank-transfers");
    assert.match(page.text, /name="above_requested"/, "the override is offered to an approver");
    const ok = await a.post("/admin/bank-transfers/confirm", {
      _csrf: csrfIn(page.text),
      reference: t.reference,
      received: "60",
      above_requested: "1",
    });
    assert.equal(ok.status, 303, ok.text);
    assert.equal(await own.balance(), before + 60);
  });

  it("answers a confirmation sent again with its key with the first result, and records the admin command as itself", async () => {
    const own = await ownCustomer();
    const t = await requestTransfer("25", own.v);
    const before = await own.balance();
    const colleague = await staffMember(["view_clients", "edit_clients"]);
    const req = {
      reference: t.reference,
      receivedAmount: "25",
      staffId: colleague.staffId,
      idempotencyKey: crypto.randomUUID(),
    };
    const [a, b] = await Promise.all([
      staffBilling.confirmBankTransfer(req),
      staffBilling.confirmBankTransfer(req),
    ]);
    assert.equal(a.balance, b.balance);
    assert.equal(await own.balance(), before + 25);
    const again = await staffBilling
      .confirmBankTransfer({ ...req, idempotencyKey: crypto.randomUUID() })
      .then(
        () => "credited",
        (err: unknown) => resolveError(err).code,
      );
    assert.equal(again, "CONFLICT", "another confirmation is still refused");
    const [row] = await sql<
      { confirmed_by: string | null; staff_id: string | null; operator: string | null }[]
    >`
      select t.confirmed_by::text, l.staff_id::text, l.operator
      from billing.top_ups t join billing.ledger l on l.id = t.ledger_id where t.reference = ${t.reference}`;
    assert.deepEqual({ ...row }, { confirmed_by: null, staff_id: null, operator: "admin" });
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
