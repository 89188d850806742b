/**
 * Names instead of ids in the portal (issue 29 §3), over HTTP: invoices and proformas name the
 * service they bill by its hostname and the order by its number, each linked; a proforma that was
 * paid reads "became INV-…, paid" and its invoice "was PRO-…", one charge and not two; the orders
 * list says how an order's services stand and an order whose services are all terminated reads so;
 * an upgrade names its service and order. The API's records carry the same names (additive fields).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { type Account, addCredit, api, auth, billing, GATEWAY, newProduct, unique } from "./helpers.ts";
import { csrfIn, planAndBigger, portalOwner, signInVisitor } from "./portal-pages.ts";

const onceIn = (html: string) => /name="_once" value="([^"]+)"/.exec(html)?.[1] ?? "";

async function signedIn() {
  const owner = await portalOwner();
  const { secretKey, key } = await auth.createKey({
    personId: owner.ownerId,
    label: "checks",
    scopes: ["services", "orders", "billing"],
    ipAllowlist: "",
  });
  const acct: Account = {
    customerId: owner.customerId,
    ownerId: owner.ownerId,
    key: secretKey,
    keyId: key!.id,
  };
  return { acct, v: await signInVisitor(GATEWAY, "portal", owner.email) };
}

/** An order placed over the API without credit: its id, number and proforma. */
async function unpaidOrder(acct: Account, body: Record<string, unknown>) {
  const r = await api("POST", "/api/v1/orders", { key: acct.key, body });
  assert.equal(r.status, 201, r.text);
  const d = r.body.data;
  return {
    id: d.order.id as string,
    number: d.order.order_number as string,
    proforma: d.proforma as { id: string; number: string },
    services: d.services as { id: string }[],
  };
}

/** The table row holding `text` (a page's list, as a browser without JavaScript gets it). */
const rowWith = (page: string, text: string) =>
  page.split("<tr>").find((r) => r.includes(text)) ?? assert.fail(`no row with ${text}`);

describe("names in the portal's lists", () => {
  it("a proforma names its order by number; paid, it reads 'became INV-…, paid' and its invoice 'was PRO-…', one charge", async () => {
    const { acct, v } = await signedIn();
    const product = await newProduct("vps", { monthly: "4.0000" });
    const o = await unpaidOrder(acct, {
      productId: product.id,
      billingCycle: "monthly",
      hostname: `${unique("named")}.example.test`,
    });

    const unpaid = await v.get("/portal/proformas");
    assert.equal(unpaid.status, 200);
    const row = rowWith(unpaid.text, o.proforma.number);
    assert.match(row, new RegExp(`<a href="/portal/orders/${o.id}">${o.number}</a>`), "the order by number");

    await addCredit(acct, "10.0000");
    const paid = await api("POST", `/api/v1/proformas/${o.proforma.id}/pay`, { key: acct.key, body: {} });
    assert.equal(paid.status, 200, paid.text);
    const inv = paid.body.data.invoice as { id: string; invoice_number: string };

    // The API's records carry the names beside the ids.
    const viaApi = (await api("GET", `/api/v1/proformas/${o.proforma.id}`, { key: acct.key })).body.data;
    assert.equal(viaApi.order_number, o.number);
    assert.equal(viaApi.converted_invoice_number, inv.invoice_number);
    const invoice = (await api("GET", `/api/v1/invoices/${inv.id}`, { key: acct.key })).body.data;
    assert.equal(invoice.from_proforma_number, o.proforma.number);

    const list = await v.get("/portal/proformas");
    assert.match(
      rowWith(list.text, o.proforma.number),
      new RegExp(
        `became <a href="/portal/invoices/${inv.id}">${inv.invoice_number}</a>, <span class="badge badge-paid">paid</span>`,
      ),
    );
    const detail = await v.get(`/portal/proformas/${o.proforma.id}`);
    assert.match(
      detail.text,
      /id="one-charge">This proforma was paid and became invoice <a href="\/portal\/invoices\//,
    );
    assert.match(detail.text, /not a second charge/);
    assert.match(
      detail.text,
      new RegExp(`<dt>Order</dt><dd><a href="/portal/orders/${o.id}">${o.number}</a>`),
    );

    const invoices = await v.get("/portal/invoices");
    assert.match(rowWith(invoices.text, inv.invoice_number), new RegExp(`\\(was ${o.proforma.number}\\)`));
    const invoicePage = await v.get(`/portal/invoices/${inv.id}`);
    assert.match(
      invoicePage.text,
      new RegExp(
        `id="one-charge">This invoice is what proforma ${o.proforma.number} became when it was paid`,
      ),
    );
  });

  it("an invoice for a service names it by hostname, linked to the service's page, in the list and on the invoice", async () => {
    const { acct, v } = await signedIn();
    const hostname = `${unique("billed")}.example.test`;
    const product = await newProduct("vps", { monthly: "5.0000" });
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
      hostname,
    });
    const { document } = await billing.adminCreateInvoice({ serviceId: service!.id });
    const link = `<a href="/portal/services/${service!.id}">${hostname}</a>`;
    const list = await v.get("/portal/invoices");
    assert.ok(rowWith(list.text, document!.number).includes(link), "the list names the service");
    const page = await v.get(`/portal/invoices/${document!.id}`);
    assert.ok(page.text.includes(`<dt>Service</dt><dd>${link}</dd>`), "the invoice names the service");
    assert.doesNotMatch(page.text, new RegExp(`>${service!.id}<`), "never the bare id");
  });

  it("the orders list says how each order's services stand, and an order whose services are all terminated reads so", async () => {
    const { acct, v } = await signedIn();
    const product = await newProduct("vps", { monthly: "3.0000" });
    const item = { productId: product.id, billingCycle: "monthly" };
    const gone = await unpaidOrder(acct, { items: [item, item] });
    const kept = await unpaidOrder(acct, { items: [item] });
    for (const s of gone.services) {
      await billing.adminSetServiceState({
        serviceId: s.id,
        action: ServiceAction.TERMINATE,
        reason: "test",
      });
    }
    const list = (await api("GET", "/api/v1/orders", { key: acct.key })).body.data.orders as {
      id: string;
      services_by_status: Record<string, number>;
    }[];
    assert.deepEqual(list.find((o) => o.id === gone.id)?.services_by_status, { terminated: 2 });
    assert.deepEqual(list.find((o) => o.id === kept.id)?.services_by_status, { pending_payment: 1 });

    const page = await v.get("/portal/orders");
    assert.match(rowWith(page.text, gone.number), />all terminated</);
    assert.match(rowWith(page.text, kept.number), /1 pending payment/);
    const detail = await v.get(`/portal/orders/${gone.id}`);
    assert.match(detail.text, /id="all-terminated">Every service of this order is terminated/);
    assert.doesNotMatch((await v.get(`/portal/orders/${kept.id}`)).text, /id="all-terminated"/);
  });

  it("an upgrade names its service by hostname", async () => {
    const { acct, v } = await signedIn();
    const { product, bigger } = await planAndBigger();
    const hostname = `${unique("grown")}.example.test`;
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
      hostname,
    });
    const quote = await v.get(`/portal/services/${service!.id}/upgrades`);
    const form =
      quote.text.split("<form ").find((f) => f.includes(`name="toProductId" value="${bigger.id}"`)) ?? "";
    const requested = await v.post(/action="([^"]+)"/.exec(form)?.[1] ?? "", {
      _csrf: csrfIn(quote.text),
      _once: onceIn(form),
      toProductId: bigger.id,
    });
    assert.equal(requested.status, 303);
    const up = await v.get(requested.location);
    assert.ok(
      up.text.includes(`<dt>Service</dt><dd><a href="/portal/services/${service!.id}">${hostname}</a>`),
    );
    assert.match(up.text, new RegExp(`<h1>Upgrade of ${hostname.replaceAll(".", "\\.")}</h1>`));
  });
});
