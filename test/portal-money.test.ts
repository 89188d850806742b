/**
 * Money in the portal's pages, over HTTP as a browser without JavaScript sends it (issue 28 §5):
 * a second identical order within minutes asks first and a used form token answers its first
 * result; the order form's quantity is the API's rule, never clamped; one person per e-mail in a
 * team; amounts read like money, with their currency; a short balance leads to Add credit with the
 * missing amount and pays part as the API allows; an upgrade's page says how long its price holds.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { type Account, addCredit, amountOf, api, auth, billing, GATEWAY, newProduct } from "./helpers.ts";
import { csrfIn, planAndBigger, portal, portalOwner, signInVisitor } from "./portal-pages.ts";

const onceIn = (html: string) => /name="_once" value="([^"]+)"/.exec(html)?.[1] ?? "";
/** The page's one-line notice, as text. */
const noticeIn = (html: string) =>
  (/<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1] ?? "").replaceAll("&#39;", "'");

/** A customer whose owner is signed in, with a key of theirs to check over the API. */
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
  return { acct, owner, v: await signInVisitor(GATEWAY, "portal", owner.email) };
}

type Visitor = Awaited<ReturnType<typeof signInVisitor>>;

const ordersOf = async (acct: Account) =>
  (await api("GET", "/api/v1/orders?limit=100", { key: acct.key })).body.data as {
    orders: { id: string; order_number: string }[];
    pagination: { total: number };
  };

/** The order form as the page serves it, sent with `fields` over the defaults. */
async function sendOrder(v: Visitor, productId: string, fields: Record<string, string> = {}) {
  const form = await v.get(`/portal/order/${productId}`);
  assert.equal(form.status, 200);
  const sent = {
    _csrf: csrfIn(form.text),
    _once: onceIn(form.text),
    billingCycle: "monthly",
    hostname: "",
    osImage: "debian-12",
    quantity: "1",
    ...fields,
  };
  return { sent, r: await v.post(`/portal/order/${productId}`, sent) };
}

/** A proforma of an order placed in the portal for a monthly product at `monthly` (no credit). */
async function orderedProforma(acct: Account, v: Visitor, monthly: string): Promise<string> {
  const product = await newProduct("vps", { monthly });
  const { r } = await sendOrder(v, product.id);
  assert.equal(r.status, 303, r.text);
  const [order] = (await ordersOf(acct)).orders;
  return (await api("GET", `/api/v1/orders/${order.id}`, { key: acct.key })).body.data.documents[0].id;
}

/** The page at `path` sends its form to `path`/pay with `fields`: the notice it comes back with. */
async function payOn(v: Visitor, path: string, fields: Record<string, string> = {}) {
  const shown = await v.get(path);
  const r = await v.post(`${path}/pay`, { _csrf: csrfIn(shown.text), _once: onceIn(shown.text), ...fields });
  assert.equal(r.status, 303);
  return (await v.get(r.location)).text;
}

describe("money in the portal", () => {
  it("a second identical order within minutes asks first, names the earlier order, and places another only when confirmed", async () => {
    const { acct, v } = await signedIn();
    const product = await newProduct("vps", { monthly: "10.0000" });
    const first = await sendOrder(v, product.id, { hostname: "shop.example.test" });
    assert.equal(first.r.status, 303, first.r.text);
    const [placed] = (await ordersOf(acct)).orders;

    // Back, then "Place the order" again: the page was fetched anew, with a fresh token.
    const again = await sendOrder(v, product.id, { hostname: "shop.example.test" });
    assert.equal(again.r.status, 409);
    assert.match(again.r.text, /You ordered the same less than a minute ago/);
    assert.match(
      again.r.text,
      new RegExp(`<a href="/portal/orders/${placed.id}">${placed.order_number}</a>`),
    );
    assert.match(again.r.text, /Yes, order another/);
    assert.equal((await ordersOf(acct)).pagination.total, 1, "nothing placed by asking");

    // The first form sent again (a reload of its POST, or Back to a kept page): its first result.
    const reload = await v.post(`/portal/order/${product.id}`, first.sent);
    assert.equal(reload.status, 303);
    assert.equal(reload.location, first.r.location);
    assert.equal((await ordersOf(acct)).pagination.total, 1);

    // Another product, or the same one with a different hostname, is not a repeat.
    const other = await sendOrder(v, product.id, { hostname: "other.example.test" });
    assert.equal(other.r.status, 303, other.r.text);
    assert.equal((await ordersOf(acct)).pagination.total, 2);

    // The question's own form, confirmed: a second identical order, placed once however often sent.
    const confirm = {
      _csrf: csrfIn(again.r.text),
      _once: onceIn(again.r.text),
      billingCycle: "monthly",
      hostname: "shop.example.test",
      osImage: "debian-12",
      quantity: "1",
      repeatOf: placed.id,
    };
    const yes = await v.post(`/portal/order/${product.id}`, confirm);
    assert.equal(yes.status, 303, yes.text);
    assert.equal((await v.post(`/portal/order/${product.id}`, confirm)).location, yes.location);
    assert.equal((await ordersOf(acct)).pagination.total, 3);

    // A confirmation names the order it followed: the next identical order asks again.
    const third = await sendOrder(v, product.id, { hostname: "shop.example.test", repeatOf: placed.id });
    assert.equal(third.r.status, 409);
    assert.equal((await ordersOf(acct)).pagination.total, 3);
  });

  it("a form token past its lifetime acts on nothing: the page says the form expired", async () => {
    const { acct, v } = await signedIn();
    const product = await newProduct("vps", { monthly: "10.0000" });
    const form = await v.get(`/portal/order/${product.id}`);
    // A token as the page makes them, shown seven hours ago (a tab left open, a reload a day later).
    const stale = randomBytes(18);
    stale.writeUInt32BE(Math.floor(Date.now() / 1000) - 7 * 3600, 0);
    const r = await v.post(`/portal/order/${product.id}`, {
      _csrf: csrfIn(form.text),
      _once: stale.toString("base64url"),
      billingCycle: "monthly",
      osImage: "debian-12",
      quantity: "1",
    });
    assert.equal(r.status, 400);
    assert.match(r.text, /This form has expired/);
    assert.equal((await ordersOf(acct)).pagination.total, 0);
  });

  it("the order form's quantity is refused as typed when the API would refuse it, never clamped, and nothing is ordered", async () => {
    const { acct, v } = await signedIn();
    await addCredit(acct, "1000.0000");
    const product = await newProduct("vps", { monthly: "5.0000" });
    for (const quantity of ["1000", "51", "0", "-1", "abc", "1e3", "1.5", " 2", ""]) {
      const { r } = await sendOrder(v, product.id, { quantity });
      assert.equal(r.status, 400, `quantity ${JSON.stringify(quantity)}: ${r.status}`);
      assert.match(r.text, /id="f-quantity-error"/, quantity);
      assert.match(r.text, /must be a whole number from 1 to 50/, quantity);
      assert.match(
        r.text,
        new RegExp(`id="f-quantity"[^>]*value="${quantity.replace(".", "\\.")}"`),
        quantity,
      );
    }
    assert.equal((await ordersOf(acct)).pagination.total, 0, "nothing ordered");
    const bal = await api("GET", "/api/v1/account/balance", { key: acct.key });
    assert.equal(bal.body.data.balance, 1000, "nothing charged");

    const { r } = await sendOrder(v, product.id, { quantity: "3" });
    assert.equal(r.status, 303, r.text);
    const [order] = (await ordersOf(acct)).orders;
    const detail = await api("GET", `/api/v1/orders/${order.id}`, { key: acct.key });
    assert.equal(detail.body.data.services.length, 3);
  });

  it("an add-on's prices read as money before Buy, and its quantity is refused as typed, never read as 1", async () => {
    const { acct, v } = await signedIn();
    await addCredit(acct, "100.0000");
    const { product } = await planAndBigger();
    await billing.adminAddProductOption({
      productId: product.id,
      name: "Extra IP",
      recurringMonthlyPrice: amountOf("2.5000"),
    });
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
    });
    const path = `/portal/services/${service!.id}/addons`;
    const shown = await v.get(path);
    assert.match(shown.text, /<td>Extra IP<\/td><td>2\.50 EUR<\/td><td>—<\/td>/);
    assert.doesNotMatch(shown.text, /<pre>/, "no raw JSON");
    const optionId = /<option value="([0-9a-f-]{36})">Extra IP<\/option>/.exec(shown.text)?.[1] ?? "";
    for (const quantity of ["1e3", "1.5", "-1", "abc", "0", "101"]) {
      const form = await v.get(path);
      const r = await v.post(path, {
        _csrf: csrfIn(form.text),
        _once: onceIn(form.text),
        optionId,
        billingType: "recurring",
        quantity,
      });
      assert.equal(r.status, 303, quantity);
      assert.match(
        (await v.get(r.location)).text,
        /role="alert" id="page-error">Invalid input: quantity: must be a whole number from 1 to 100</,
        quantity,
      );
    }
    const held = await api("GET", `/api/v1/services/${service!.id}/options`, { key: acct.key });
    assert.equal(held.body.data.options.length, 0, "nothing bought");
  });

  it("a reloaded team invite adds nobody twice: one person per e-mail in a team, 409 with the reason beside the field", async () => {
    const { owner, v } = await signedIn();
    /** The invitation form as a fresh Team page serves it (its own one-time token). */
    const freshInvite = async () => {
      const page = await v.get("/portal/team");
      return {
        _csrf: csrfIn(page.text),
        _once: onceIn(page.text),
        name: "Tess",
        email: "tess@example.test",
        permissions: "view_services",
      };
    };
    const invite = await freshInvite();
    const first = await v.post("/portal/team", invite);
    assert.equal(first.status, 303);
    assert.match((await v.get(first.location)).text, /Set-password link for Tess/);
    // The reload of that result posts the same form again: its first outcome, nobody added.
    const reloaded = await v.post("/portal/team", invite);
    assert.equal(reloaded.location, first.location);
    // The same address typed again in a new form, in other letters too, or the owner's.
    for (const email of ["tess@example.test", "Tess@Example.TEST", owner.email]) {
      const again = await v.post("/portal/team", { ...(await freshInvite()), email });
      assert.equal(again.status, 409, email);
      assert.match(
        again.text,
        /id="f-email-error"[^>]*>Someone in this team already has this e-mail address</,
      );
    }
    const { people } = await auth.getCustomer({ customerId: owner.customerId });
    assert.equal(people.filter((p) => p.email.toLowerCase() === "tess@example.test").length, 1);
    // Auth itself refuses it (a desk or a program calling it has the same rule).
    await assert.rejects(
      auth.createPerson({
        customerId: owner.customerId,
        name: "Tess again",
        email: "TESS@example.test",
        permissions: [],
      }),
      /Someone in this team already has this e-mail address/,
    );
    // Someone removed can be invited again.
    const tess = people.find((p) => p.email === "tess@example.test")!;
    await portal.removePerson({ personId: tess.id });
    const back = await v.post("/portal/team", await freshInvite());
    assert.equal(back.status, 303, "re-invited after removal");
  });

  it("a short balance on a proforma leads to Add credit with the missing amount and pays part as the API allows; amounts read with their currency", async () => {
    const { acct, v } = await signedIn();
    const proforma = `/portal/proformas/${await orderedProforma(acct, v, "10.0000")}`;
    await addCredit(acct, "4.0007");

    const shown = await v.get(proforma);
    assert.equal(shown.status, 200);
    assert.match(
      shown.text,
      /Your credit balance is 4\.0007 EUR/,
      "sub-cent digits kept: the ledger's figure",
    );
    assert.match(shown.text, /5\.9993 EUR short<\/strong> of the 10\.00 EUR due/);
    assert.match(shown.text, /<a href="\/portal\/add-credit\?amount=5\.9993" id="add-missing-credit">/);
    assert.doesNotMatch(shown.text, /POST \/|\/api\/v1/, "no API call printed on the page");
    // Following it: the forms start with the missing amount, rounded up to what can be paid, and
    // never below the smallest top-up.
    const creditPage = await v.get("/portal/add-credit?amount=5.9993");
    assert.match(creditPage.text, /id="f-bank-amount"[^>]* value="6\.00"/);
    const little = await v.get("/portal/add-credit?amount=0.50");
    assert.match(little.text, /id="f-bank-amount"[^>]* value="5\.00"/);

    const part = await payOn(v, proforma, { amount: "4" });
    assert.equal(
      noticeIn(part),
      "4.00 EUR paid from credit; 6.00 EUR is still due. Your balance is now 0.0007 EUR.",
    );
    const doc = (await api("GET", `/api/v1${proforma.slice("/portal".length)}`, { key: acct.key })).body.data;
    assert.equal(doc.status, "unpaid");
    assert.equal(doc.amount_paid, 4);
    assert.equal(doc.amount_due, 6);

    // More than the balance holds: the API's refusal, in words, and nothing moves.
    assert.match(
      await payOn(v, proforma, { amount: "5" }),
      /role="alert" id="page-error">Insufficient credit balance</,
    );

    // Credit that covers the rest: one button pays it, and the balance reads as money.
    await addCredit(acct, "10.0000");
    const full = await v.get(proforma);
    assert.match(full.text, /Pays 6\.00 EUR from your credit balance of 10\.0007 EUR/);
    assert.doesNotMatch(full.text, /id="add-missing-credit"/);
    assert.equal(noticeIn(await payOn(v, proforma)), "Paid from credit; your balance is now 4.0007 EUR.");
  });

  it("a payment's notice reads like money: two decimals and the currency", async () => {
    const { acct, v } = await signedIn();
    const proforma = `/portal/proformas/${await orderedProforma(acct, v, "7.5000")}`;
    await addCredit(acct, "20.0000");
    assert.equal(noticeIn(await payOn(v, proforma)), "Paid from credit; your balance is now 12.50 EUR.");
  });

  it("an upgrade's pages say its price holds until it expires, and show its amounts with the currency", async () => {
    const { acct, v } = await signedIn();
    const { product, bigger } = await planAndBigger();
    const { service } = await billing.adminCreateService({
      customerId: acct.customerId,
      productId: product.id,
      kind: ProductKind.VPS,
      status: ServiceStatus.ACTIVE,
    });
    const quote = await v.get(`/portal/services/${service!.id}/upgrades`);
    assert.equal(quote.status, 200);
    assert.match(
      quote.text,
      /id="quote-holds">An upgrade you request is invoiced at the amount to pay now, and that price holds until it expires at the end of the current term \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)/,
    );
    // The path to the bigger plan (the catalogue's other plans of the kind are paths too).
    const form = quote.text
      .split("<form ")
      .find((f) => f.includes(`name="toProductId" value="${bigger.id}"`));
    assert.ok(form);
    const action = /action="([^"]+)"/.exec(form)?.[1] ?? "";
    const requested = await v.post(action, {
      _csrf: csrfIn(quote.text),
      _once: onceIn(form),
      toProductId: bigger.id,
    });
    assert.equal(requested.status, 303);
    const up = await v.get(requested.location);
    const viaApi = (
      await api("GET", `/api/v1/upgrades/${/upgrades\/([0-9a-f-]{36})/.exec(requested.location)?.[1]}`, {
        key: acct.key,
      })
    ).body.data;
    assert.equal(viaApi.status, "awaiting_payment");
    assert.match(up.text, /<dt>Amount<\/dt><dd>\d+\.\d{2,4} EUR<\/dd>/);
    assert.match(up.text, /<dt>Price holds until<\/dt>/);
    assert.match(
      up.text,
      /id="quote-holds">This price holds until it expires on \d{4}-\d\d-\d\d \d\d:\d\d UTC: pay the invoice <a href="\/portal\/invoices\/[0-9a-f-]{36}">INV-/,
    );
  });
});
