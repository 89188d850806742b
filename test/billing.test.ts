import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { ProductKind, ProductKindSchema, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import { enumFromWord } from "@hb/platform";
import {
  addCredit,
  amountOf,
  api,
  auth,
  billing,
  cyclePrices,
  eventually,
  kindOf,
  newAccount,
  newMember,
  newProduct,
} from "./helpers.ts";
import { serviceSql } from "./support/service-db.ts";

const order = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  api("POST", "/api/v1/orders", { key, body, headers });

async function ledgerSum(personId: string) {
  const sql = serviceSql("billing");
  try {
    const [r] = await sql<{ sum: string; balance: string }[]>`
      select coalesce((select sum(amount) from billing.ledger where person_id = ${personId}), 0)::text as sum,
             coalesce((select balance from billing.balances where person_id = ${personId}), 0)::text as balance`;
    return r;
  } finally {
    await sql.end();
  }
}

describe("orders", () => {
  it("settles from credit in the same request and answers 201 with the order creation result", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const product = await newProduct("vps", { monthly: "12.3400" });
    const r = await order(acct.key, { productId: product.id, billingCycle: "monthly", hostname: "web-1" });
    assert.equal(r.status, 201, r.text);
    const d = r.body.data;
    assert.equal(d.settled, true);
    assert.equal(d.document.settled, true);
    assert.equal(d.document.type, "invoice");
    assert.equal(d.document.total, 12.34);
    assert.equal(d.credit_balance, 87.66);
    assert.ok(d.order.id && d.order.order_number && d.order.status && d.order.payment_status);
    assert.equal(d.services.length, 1);
    assert.ok(d.services[0].id && d.services[0].status);
    assert.equal(d.invoice.status, "paid");
    assert.equal(d.proforma.status, "paid");
    assert.equal(typeof d.next_step, "string");
    const sums = await ledgerSum(acct.ownerId);
    assert.equal(sums.sum, "87.6600");
    assert.equal(sums.balance, "87.6600");
    // Provisioning starts after payment and ends active.
    const svc = await eventually(async () => {
      const s = await api("GET", `/api/v1/services/${d.services[0].id}`, { key: acct.key });
      return s.body.data?.status === "active" ? s.body.data : undefined;
    });
    assert.equal(svc.hostname, "web-1");
  });

  it("raises an unpaid proforma when credit does not cover it; paying it converts it to an invoice and provisions", async () => {
    const acct = await newAccount();
    const product = await newProduct("vps", { monthly: "20.0000" });
    const r = await order(acct.key, { productId: product.id, billingCycle: "monthly" });
    assert.equal(r.status, 201);
    assert.equal(r.body.data.settled, false);
    assert.equal(r.body.data.document.type, "proforma");
    assert.equal(r.body.data.invoice, null);
    assert.equal(r.body.data.credit_balance, 0);
    assert.match(r.body.data.next_step, /proformas\/.+\/pay/);
    const serviceId = r.body.data.services[0].id;
    // A paid order placed after it is built: the provisioner has passed the unpaid one by.
    const other = await newAccount();
    await addCredit(other, "20");
    const later = await order(other.key, { productId: product.id, billingCycle: "monthly" });
    await eventually(async () => {
      const s = await api("GET", `/api/v1/services/${later.body.data.services[0].id}`, { key: other.key });
      return s.body.data?.status === "active";
    }, 20_000);
    const before = await api("GET", `/api/v1/services/${serviceId}`, { key: acct.key });
    assert.equal(before.body.data.status, "pending_payment", "provisioning does not start before payment");

    const poor = await api("POST", `/api/v1/proformas/${r.body.data.proforma.id}/pay`, {
      key: acct.key,
      body: {},
    });
    assert.equal(poor.status, 400);
    assert.equal(poor.body.code, "BAD_REQUEST");

    await addCredit(acct, "25");
    const paid = await api("POST", `/api/v1/proformas/${r.body.data.proforma.id}/pay`, {
      key: acct.key,
      body: {},
    });
    assert.equal(paid.status, 200, paid.text);
    assert.equal(paid.body.success, true);
    assert.equal(typeof paid.body.message, "string");
    assert.deepEqual(
      { ...paid.body.data, invoice: undefined },
      { creditApplied: 20, newBalance: 5, remainingAmount: 0, proformaPaid: true, invoice: undefined },
    );
    assert.match(paid.body.data.invoice.invoice_number, /^INV-/);
    assert.equal(paid.body.data.invoice.status, "paid");
    await eventually(async () => {
      const s = await api("GET", `/api/v1/services/${serviceId}`, { key: acct.key });
      return s.body.data.status === "active";
    });
    const o = await api("GET", `/api/v1/orders/${r.body.data.order.id}`, { key: acct.key });
    assert.equal(o.body.data.payment_status, "paid");
  });

  it("validates the body: items up to 50, known product and cycle, valid ids", async () => {
    const acct = await newAccount();
    const product = await newProduct();
    const many = Array.from({ length: 51 }, () => ({ productId: product.id, billingCycle: "monthly" }));
    const cases: Array<[unknown, number, string]> = [
      [{ items: many }, 400, "items"],
      [{ productId: "nope", billingCycle: "monthly" }, 400, "productId"],
      [{ productId: product.id }, 400, "billingCycle"],
      [{ productId: product.id, billingCycle: "weekly" }, 400, "billingCycle"],
      [
        { productId: product.id, billingCycle: "monthly", configOptions: { os_image_id: "windows-95" } },
        400,
        "configOptions.os_image_id",
      ],
      [{ productId: "01a2070d-89b7-7094-b1d2-cc98e6753b5b", billingCycle: "monthly" }, 404, "productId"],
      [[], 400, ""],
      [{}, 400, ""],
    ];
    for (const [body, status, field] of cases) {
      const r = await order(acct.key, body);
      assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 60)} → ${r.text.slice(0, 200)}`);
      if (field)
        assert.ok(
          JSON.stringify(r.body.details ?? []).includes(field) || r.body.error.includes(field),
          r.text,
        );
    }
  });

  it("places a multi-item order and charges its total once", async () => {
    const acct = await newAccount();
    await addCredit(acct, "1000");
    const product = await newProduct();
    const items = Array.from({ length: 3 }, (_, i) => ({
      productId: product.id,
      billingCycle: "annually",
      hostname: `n${i}`,
    }));
    const r = await order(acct.key, { items });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.data.services.length, 3);
    assert.equal(r.body.data.document.total, 300);
    assert.equal(r.body.data.settled, true);
    const sums = await ledgerSum(acct.ownerId);
    assert.equal(sums.balance, "700.0000");
    assert.equal(sums.sum, "700.0000");
  });

  it("a blind retry with the same Idempotency-Key returns the first result and charges once", async () => {
    const acct = await newAccount();
    await addCredit(acct, "50");
    const product = await newProduct();
    const body = { productId: product.id, billingCycle: "monthly" };
    const headers = { "idempotency-key": "retry-123" };
    const first = await order(acct.key, body, headers);
    const second = await order(acct.key, body, headers);
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    assert.equal(second.body.data.order.id, first.body.data.order.id);
    assert.equal((await ledgerSum(acct.ownerId)).balance, "40.0000");
    const other = await order(acct.key, { ...body, billingCycle: "annually" }, headers);
    assert.equal(other.status, 400);
  });

  it("never overspends: concurrent orders against one balance settle only what it covers", async () => {
    const acct = await newAccount();
    await addCredit(acct, "50");
    const product = await newProduct("vps", { monthly: "12.0000" });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => order(acct.key, { productId: product.id, billingCycle: "monthly" })),
    );
    assert.ok(
      results.every((r) => r.status === 201),
      results.map((r) => r.status).join(","),
    );
    assert.equal(results.filter((r) => r.body.data.settled).length, 4);
    const sums = await ledgerSum(acct.ownerId);
    assert.equal(sums.balance, "2.0000");
    assert.equal(sums.sum, "2.0000");
  });

  it("refuses orders for a suspended account, and without the orders scope", async () => {
    const acct = await newAccount();
    const readOnly = (
      await auth.createKey({
        personId: acct.ownerId,
        label: "ro",
        scopes: [],
        ipAllowlist: "",
      })
    ).secretKey;
    const product = await newProduct();
    const r = await order(readOnly, { productId: product.id, billingCycle: "monthly" });
    assert.equal(r.status, 403);
    assert.equal(r.body.code, "SCOPE_REQUIRED");
    assert.equal(r.body.scope, "orders");
    await auth.setCustomerStatus({ customerId: acct.customerId, status: CustomerStatus.SUSPENDED });
    const s = await order(acct.key, { productId: product.id, billingCycle: "monthly" });
    assert.equal(s.status, 403);
    assert.equal(s.body.code, "ACCOUNT_SUSPENDED");
    assert.equal((await api("GET", "/api/v1/orders", { key: acct.key })).status, 200, "reads still work");
  });
});

describe("invoices and payment", () => {
  async function invoiceFor(acct: { customerId: string }, amount = "30") {
    const product = await newProduct();
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
    });
    const doc = await billing.adminCreateInvoice({
      serviceId: service!.id,
      amount: amountOf(amount),
      kind: DocumentKind.INVOICE,
    });
    return { serviceId: service!.id, invoice: doc.document! };
  }

  it("charges once when the same invoice is paid many times at once", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const { invoice } = await invoiceFor(acct, "30");
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        api("POST", `/api/v1/invoices/${invoice.id}/pay`, { key: acct.key, body: {} }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 1, results.map((r) => r.status).join(","));
    assert.ok(
      results.filter((r) => r.status !== 200).every((r) => r.status === 409 && r.body.code === "CONFLICT"),
    );
    const sums = await ledgerSum(acct.ownerId);
    assert.equal(sums.balance, "70.0000");
    assert.equal(sums.sum, "70.0000");
  });

  it("pays part with amount, refuses more than due, and reports what remains", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const { invoice } = await invoiceFor(acct, "30");
    const part = await api("POST", `/api/v1/invoices/${invoice.id}/pay`, {
      key: acct.key,
      body: { amount: 10.5 },
    });
    assert.equal(part.status, 200, part.text);
    assert.equal(part.body.data.creditApplied, 10.5);
    assert.equal(part.body.data.remainingAmount, 19.5);
    assert.equal(part.body.data.newBalance, 89.5);
    const over = await api("POST", `/api/v1/invoices/${invoice.id}/pay`, {
      key: acct.key,
      body: { amount: 50 },
    });
    assert.equal(over.status, 400);
    for (const bad of [{ amount: -1 }, { amount: "ten" }, { amount: 0 }, { amount: 1.23456 }]) {
      const r = await api("POST", `/api/v1/invoices/${invoice.id}/pay`, { key: acct.key, body: bad });
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.ok(r.body.details?.[0]?.field === "amount");
    }
    const detail = await api("GET", `/api/v1/invoices/${invoice.id}`, { key: acct.key });
    assert.equal(detail.body.data.amount_paid, 10.5);
    assert.equal(detail.body.data.items.length, 1);
  });

  it("a pay repeated with its Idempotency-Key answers as the first did and charges once; the key with another body is refused", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const { invoice } = await invoiceFor(acct, "30");
    const pay = (key: string, body: unknown) =>
      api("POST", `/api/v1/invoices/${invoice.id}/pay`, {
        key: acct.key,
        body,
        headers: { "idempotency-key": key },
      });
    const first = await pay("part-1", { amount: 10 });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      { ...first.body.data, invoice: undefined },
      { creditApplied: 10, newBalance: 90, remainingAmount: 20, invoice: undefined },
    );
    const again = await pay("part-1", { amount: 10 });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body, first.body, "the repeat answers the first answer, whole");
    const reused = await pay("part-1", { amount: 5 });
    assert.equal(reused.status, 400, reused.text);
    assert.equal(reused.body.details?.[0]?.field, "Idempotency-Key");
    // The rest, the same key sent five times at once: one payment.
    const rest = await Promise.all(Array.from({ length: 5 }, () => pay("rest-1", {})));
    assert.deepEqual(
      rest.map((r) => r.status),
      [200, 200, 200, 200, 200],
      rest.map((r) => r.text).join("\n"),
    );
    for (const r of rest) assert.deepEqual(r.body, rest[0].body);
    assert.equal(rest[0].body.data.remainingAmount, 0);
    assert.equal(rest[0].body.data.invoice.status, "paid");
    const sums = await ledgerSum(acct.ownerId);
    assert.equal(sums.balance, "70.0000");
    assert.equal(sums.sum, "70.0000");
  });

  it("a proforma pay (the engine's, not one statement) repeated with its Idempotency-Key answers as the first did", async () => {
    const acct = await newAccount();
    const product = await newProduct("vps", { monthly: "20.0000" });
    const placed = await order(acct.key, { productId: product.id, billingCycle: "monthly" });
    assert.equal(placed.body.data.settled, false, placed.text);
    await addCredit(acct, "25");
    const pay = () =>
      api("POST", `/api/v1/proformas/${placed.body.data.proforma.id}/pay`, {
        key: acct.key,
        body: {},
        headers: { "idempotency-key": "proforma-1" },
      });
    const first = await pay();
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.data.proformaPaid, true);
    const again = await pay();
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body, first.body);
    assert.equal((await ledgerSum(acct.ownerId)).balance, "5.0000");
  });

  it("lists invoices with default limit 20, ?status=unpaid and stats inside data", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const a = await invoiceFor(acct, "5");
    await invoiceFor(acct, "6");
    await api("POST", `/api/v1/invoices/${a.invoice.id}/pay`, { key: acct.key, body: {} });
    const all = await api("GET", "/api/v1/invoices", { key: acct.key });
    assert.equal(all.status, 200);
    assert.equal(all.body.data.pagination.limit, 20);
    assert.equal(all.body.data.pagination.total, 2);
    assert.ok(all.body.data.stats);
    const unpaid = await api("GET", "/api/v1/invoices?status=unpaid", { key: acct.key });
    assert.equal(unpaid.body.data.invoices.length, 1);
    assert.equal(unpaid.body.data.invoices[0].status, "unpaid");
    const big = await api("GET", "/api/v1/invoices?limit=1000", { key: acct.key });
    assert.equal(big.body.data.pagination.limit, 200);
  });

  it("hides another customer's invoice behind 404 and refuses a malformed id with 400", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const { invoice } = await invoiceFor(owner, "5");
    assert.equal((await api("GET", `/api/v1/invoices/${invoice.id}`, { key: other.key })).status, 404);
    assert.equal(
      (await api("POST", `/api/v1/invoices/${invoice.id}/pay`, { key: other.key, body: {} })).status,
      404,
    );
    assert.equal((await api("GET", "/api/v1/invoices/12345", { key: owner.key })).status, 400);
  });

  it("spends the key owner's own credit in a shared account", async () => {
    const acct = await newAccount();
    const member = await newMember(acct.customerId, ["view_invoices", "pay_invoices"], ["billing"]);
    await addCredit(acct, "100");
    const { invoice } = await invoiceFor(acct, "10");
    const r = await api("POST", `/api/v1/invoices/${invoice.id}/pay`, { key: member.key, body: {} });
    assert.equal(r.status, 400, "the member has no credit of their own");
    assert.equal((await ledgerSum(acct.ownerId)).balance, "100.0000");
  });

  it("limits paying one document to 10 a minute", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const { invoice } = await invoiceFor(acct, "50");
    for (let i = 0; i < 10; i++) {
      const r = await api("POST", `/api/v1/invoices/${invoice.id}/pay`, {
        key: acct.key,
        body: { amount: 0.01 },
      });
      assert.equal(r.status, 200, r.text);
    }
    const r = await api("POST", `/api/v1/invoices/${invoice.id}/pay`, {
      key: acct.key,
      body: { amount: 0.01 },
    });
    assert.equal(r.status, 429);
    assert.equal(r.body.code, "ACTION_RATE_LIMITED");
    assert.ok(r.body.retry_after_seconds >= 1);
    assert.equal(r.headers.get("retry-after"), String(r.body.retry_after_seconds));
  });
});

describe("services, renewal and cancellation", () => {
  it("lists all kinds with pagination and stats inside data, filtered by status", async () => {
    const acct = await newAccount();
    for (const kind of ["vps", "dedicated", "game"]) {
      const p = await newProduct(kind);
      await billing.adminCreateService({
        customerId: acct.customerId,
        productId: p.id,
        kind: enumFromWord(ProductKindSchema, kind),
        status: kind === "game" ? ServiceStatus.SUSPENDED : ServiceStatus.ACTIVE,
      });
    }
    const r = await api("GET", "/api/v1/services", { key: acct.key });
    assert.equal(r.status, 200);
    assert.equal(r.body.data.services.length, 3);
    assert.deepEqual(r.body.data.pagination, { page: 1, limit: 20, total: 3, pages: 1 });
    assert.equal(r.body.data.stats.by_status.active, 2);
    const s = await api("GET", "/api/v1/services?status=suspended", { key: acct.key });
    assert.equal(s.body.data.services.length, 1);
    assert.equal((await api("GET", "/api/v1/services?status=bogus", { key: acct.key })).status, 400);
    assert.equal((await api("GET", "/api/v1/services?limit=0", { key: acct.key })).status, 400);
    assert.equal((await api("GET", "/api/v1/services?page=abc", { key: acct.key })).status, 400);
  });

  it("renews early once, and refuses with 409 while that document is open", async () => {
    const acct = await newAccount();
    const p = await newProduct();
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: p.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
    });
    // A document already open on the service: refused with 409, and the refusal spends no cool-down.
    const open = await billing.adminCreateInvoice({
      serviceId: service!.id,
      amount: amountOf("3"),
      description: "extra",
    });
    const refused = await api("POST", `/api/v1/services/${service!.id}/renew`, { key: acct.key });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.code, "CONFLICT");
    const openId = open.document!.id;
    await addCredit(acct, "3");
    assert.equal(
      (await api("POST", `/api/v1/invoices/${openId}/pay`, { key: acct.key, body: {} })).status,
      200,
    );
    const first = await api("POST", `/api/v1/services/${service!.id}/renew`, { key: acct.key });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.data.invoice.status, "unpaid");
    // Within the renewal cool-down (1 per 10 minutes) a second request is rate limited.
    const second = await api("POST", `/api/v1/services/${service!.id}/renew`, { key: acct.key });
    assert.equal(second.status, 429, second.text);
    assert.equal(second.body.code, "ACTION_RATE_LIMITED");
  });

  it("schedules a cancellation, withdraws it, and terminates immediately when asked", async () => {
    const acct = await newAccount();
    const p = await newProduct();
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: p.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
    });
    const id = service!.id;
    const scheduled = await api("POST", `/api/v1/services/${id}/cancel`, {
      key: acct.key,
      body: { reason: "moving", immediate: false },
    });
    assert.equal(scheduled.status, 200, scheduled.text);
    assert.equal(scheduled.body.data.cancellation.type, "end_of_term");
    const withdrawn = await api("DELETE", `/api/v1/services/${id}/cancel`, { key: acct.key });
    assert.equal(withdrawn.status, 200);
    assert.equal(withdrawn.body.data.cancellation, null);
    assert.equal((await api("DELETE", `/api/v1/services/${id}/cancel`, { key: acct.key })).status, 409);
    const bad = await api("POST", `/api/v1/services/${id}/cancel`, {
      key: acct.key,
      body: { immediate: "yes" },
    });
    assert.equal(bad.status, 400);
    const now = await api("POST", `/api/v1/services/${id}/cancel`, {
      key: acct.key,
      body: { reason: "done", immediate: true },
    });
    assert.equal(now.body.data.status, "terminated");
    const noScope = (
      await auth.createKey({
        personId: acct.ownerId,
        label: "s",
        scopes: ["services"],
        ipAllowlist: "",
      })
    ).secretKey;
    const refused = await api("POST", `/api/v1/services/${id}/cancel`, { key: noScope, body: {} });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.scope, "destructive");
  });
});

describe("account", () => {
  it("shows profile, balance, usage and the ledger", async () => {
    const acct = await newAccount();
    await addCredit(acct, "42.5");
    const a = await api("GET", "/api/v1/account", { key: acct.key });
    assert.equal(a.status, 200);
    assert.equal(a.body.data.currency, "EUR");
    assert.equal(a.body.data.country, "DE");
    assert.equal(a.body.data.company, "Test Co");
    assert.equal(a.body.data.credit_balance, 42.5);
    assert.ok(Array.isArray(a.body.data.permissions));
    const b = await api("GET", "/api/v1/account/balance", { key: acct.key });
    assert.deepEqual(b.body.data, { balance: 42.5, currency: "EUR" });
    const u = await api("GET", "/api/v1/account/usage", { key: acct.key });
    assert.equal(u.body.data.balance, 42.5);
    assert.ok(
      "recurring_monthly_amount" in u.body.data &&
        "unpaid_invoices" in u.body.data &&
        "hourly_charges_this_month" in u.body.data,
    );
    const t = await api("GET", "/api/v1/account/transactions", { key: acct.key });
    assert.equal(t.body.data.transactions.length, 1);
    assert.equal(t.body.data.transactions[0].amount, 42.5);
    assert.equal(t.body.data.pagination.limit, 20);
  });
});

describe("outbox", () => {
  it("publishes an event committed before a crash, once, when the relay runs again", async () => {
    const { connect } = await import("@nats-io/transport-node");
    const { jetstreamManager } = await import("@nats-io/jetstream");
    const { create, toBinary } = await import("@bufbuild/protobuf");
    const { EventSchema } = await import("@hb/contracts/hb/events/v1/events_pb");
    const { timestampNow } = await import("@bufbuild/protobuf/wkt");
    const { newId } = await import("@hb/platform");
    const ns = process.env.HB_NS!;
    const id = newId();
    const event = create(EventSchema, { id, type: "order.paid", occurredAt: timestampNow() });
    const sql = serviceSql("billing");
    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    try {
      // As if billing committed the row and died before publishing it.
      await sql`insert into billing.outbox (id, subject, payload) values (${id}, ${`${ns}.events.order.paid`}, ${Buffer.from(toBinary(EventSchema, event))})`;
      await eventually(
        async () =>
          (await sql`select published_at from billing.outbox where id = ${id}`)[0].published_at !== null,
      );
      // A second publish of the same row (a crash after publishing, before marking) is dropped by the stream.
      await sql`update billing.outbox set published_at = null where id = ${id}`;
      await eventually(
        async () =>
          (await sql`select published_at from billing.outbox where id = ${id}`)[0].published_at !== null,
      );
      const jsm = await jetstreamManager(nc);
      const stream = `${ns.toUpperCase()}_EVENTS`;
      const msg = await jsm.streams
        .getMessage(stream, { last_by_subj: `${ns}.events.order.paid` })
        .catch(() => undefined);
      assert.ok(msg, "the event reached the stream");
      let copies = 0;
      const info = await jsm.streams.info(stream);
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
        const m = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
        if (m?.header?.get("Nats-Msg-Id") === id) copies++;
      }
      assert.equal(copies, 1);
    } finally {
      await sql.end();
      await nc.close();
    }
  });
});

describe("hourly products", () => {
  it("need a minimum credit, are charged each hour from credit without a document, and suspend when credit runs out", async () => {
    const acct = await newAccount();
    const r = await billing.adminCreateProduct({
      name: `hourly ${Date.now()}`,
      kind: kindOf("vps"),
      prices: cyclePrices({ hourly: "0.5000" }),
      currency: "EUR",
      minimumCredit: amountOf("1.0000"),
      osImages: ["debian-12"],
    });
    const product = r.product!;
    const shown = await api("GET", `/api/v1/products/${product.id}`, { key: acct.key });
    assert.equal(shown.body.data.hourly.minimum_credit, 1);
    const poor = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: { productId: product.id, billingCycle: "hourly" },
    });
    assert.equal(poor.status, 400, poor.text);
    await addCredit(acct, "1.2");
    const ok = await api("POST", "/api/v1/orders", {
      key: acct.key,
      body: { productId: product.id, billingCycle: "hourly" },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.data.document, null, "no document");
    assert.equal(ok.body.data.settled, true);
    assert.equal(ok.body.data.credit_balance, 0.7, "first hour charged");
    const serviceId = ok.body.data.services[0].id;
    await eventually(
      async () =>
        (await api("GET", `/api/v1/services/${serviceId}`, { key: acct.key })).body.data.status === "active",
    );
    const sql = serviceSql("billing");
    try {
      await sql`update billing.services set charged_until = now() - interval '1 minute' where id = ${serviceId}`;
      await eventually(async () => (await ledgerSum(acct.ownerId)).balance === "0.2000");
      await sql`update billing.services set charged_until = now() - interval '1 minute' where id = ${serviceId}`;
      await eventually(
        async () =>
          (await api("GET", `/api/v1/services/${serviceId}`, { key: acct.key })).body.data.status ===
          "suspended",
      );
    } finally {
      await sql.end();
    }
    assert.equal((await ledgerSum(acct.ownerId)).balance, "0.2000", "never below zero");
    const invoices = await api("GET", "/api/v1/invoices", { key: acct.key });
    assert.equal(invoices.body.data.pagination.total, 0);
  });
});
