import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { PortalService, Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import type postgres from "postgres";
import { newToken } from "../services/gateway/src/pages/customer/once.ts";
import { eventually, newProduct, unique } from "./helpers.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { csrfIn, PASSWORD, signInVisitor } from "./portal-pages.ts";
import { stackClient } from "./support/clients.ts";
import { serviceSql } from "./support/service-db.ts";
import { captureLogs, type LogLine, metricsText, sample } from "./support/stack-output.ts";
import {
  deliver,
  type StripeStandIn,
  sign,
  startStripeStandIn,
  TEST_SECRET_KEY,
  TEST_WEBHOOK_SECRET,
} from "./support/stripe-stand-in.ts";

// Card top-ups on a private stack whose billing talks to a local Stripe stand-in (the shared
// stack has no card provider: there the card option is hidden, payments-bank.test.ts).

describe("card top-ups through Stripe Checkout", () => {
  let stripe: StripeStandIn;
  let s: OwnStack;
  let sql: postgres.Sql;
  let portal: ReturnType<typeof stackClient<[typeof PortalService]>>;
  let owner: { customerId: string; personId: string; email: string; key: string };
  let browser: Awaited<ReturnType<typeof signInVisitor>>;
  let staffBilling: ReturnType<typeof stackClient<[typeof BillingStaffService]>>;
  let logs: Record<"billing", LogLine[]>;

  /** A new customer signed in to the portal (each test its own: top-ups have a cool-down per person). */
  async function newPayer(currency = "EUR") {
    const email = `${unique("card")}@example.test`;
    const { customer, owner: person } = await s.auth.createCustomer({
      name: "Card Customer",
      email,
      currency,
    });
    const key = (
      await s.auth.createKey({
        personId: person!.id,
        label: "t",
        scopes: ["billing", "orders"],
        ipAllowlist: "",
      })
    ).secretKey;
    const { token } = await portal.client.createPasswordLink({ realm: Realm.PORTAL, subjectId: person!.id });
    await portal.client.setPassword({ token, password: PASSWORD });
    const visitor = await signInVisitor(s.stack.gatewayUrl, "portal", email);
    return { customerId: customer!.id, personId: person!.id, email, key, browser: visitor };
  }

  before(async () => {
    stripe = await startStripeStandIn();
    s = await ownStack("payments-card", {
      STRIPE_SECRET_KEY: TEST_SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      STRIPE_API_BASE: stripe.url,
    });
    sql = serviceSql("billing", s.stack.env.DATABASE_URL);
    portal = stackClient(s.stack.env, [PortalService], "AUTH_ADDR");
    staffBilling = stackClient(s.stack.env, [BillingStaffService], "BILLING_ADDR");
    logs = captureLogs(s, ["billing"] as const);
  });
  beforeEach(async () => {
    ({ browser, ...owner } = await newPayer());
  });
  after(async () => {
    portal?.close();
    staffBilling?.close();
    await sql?.end({ timeout: 5 });
    await s?.close();
    await stripe?.close();
  });

  const balance = async () => {
    const r = await s.call("GET", "/account/balance", owner.key);
    assert.equal(r.status, 200, r.text);
    return r.body.data.balance as number;
  };
  const creditEntries = async () =>
    (
      await sql<
        { n: number }[]
      >`select count(*)::int as n from billing.ledger where person_id = ${owner.personId} and kind = 'credit_added'`
    )[0].n;

  /** Asks for a card top-up in the portal; returns the top-up's id and its Checkout Session. */
  async function cardTopUp(amount: string) {
    const form = await browser.get("/portal/add-credit");
    assert.equal(form.status, 200);
    assert.match(form.text, /Pay by card/);
    const once =
      /name="_once" value="([^"]+)"/.exec(
        form.text.slice(form.text.indexOf('action="/portal/add-credit/card"')),
      )?.[1] ?? "";
    const r = await browser.post("/portal/add-credit/card", {
      _csrf: csrfIn(form.text),
      _once: once,
      "card-amount": amount,
    });
    assert.equal(r.status, 303, r.text);
    const id = /\/portal\/add-credit\/([0-9a-f-]{36})/.exec(r.location)?.[1];
    assert.ok(id, r.location);
    const session = [...stripe.sessions.values()].find((x) => x.metadata.top_up_id === id);
    assert.ok(session, "a Checkout Session was created for the top-up");
    return { id, session, location: r.location, once, csrf: csrfIn(form.text) };
  }

  it("opens a Checkout Session for the amount in the account's currency and links the page to it", async () => {
    const t = await cardTopUp("25.50");
    assert.equal(t.session.amount_total, 2550);
    assert.equal(t.session.currency, "eur");
    assert.equal(t.session.client_reference_id, t.id);
    assert.ok(t.session.success_url.includes(`/portal/add-credit/${t.id}/return`));
    assert.ok(
      stripe.requests.every((r) => r.authorised),
      "every call carried the secret key",
    );
    const page = await browser.get(t.location);
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(`href="${t.session.url}"`), "the page links to the Checkout Session");
    // The same form sent again (a double click) opens no second session.
    const again = await browser.post("/portal/add-credit/card", {
      _csrf: t.csrf,
      _once: t.once,
      "card-amount": "25.50",
    });
    assert.equal(again.status, 303);
    assert.equal([...stripe.sessions.values()].filter((x) => x.metadata.top_up_id === t.id).length, 1);
  });

  it("credits a paid session once when its event is replayed three times", async () => {
    const before = await balance();
    const entries = await creditEntries();
    const t = await cardTopUp("40");
    const { completed, succeeded } = stripe.pay(t.session.id);
    for (let i = 0; i < 3; i++) {
      const r = await deliver(s.stack.gatewayUrl, completed);
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    // The payment's other event (the same money) moves nothing either.
    assert.equal((await deliver(s.stack.gatewayUrl, succeeded)).status, 200);
    assert.equal(await balance(), before + 40);
    assert.equal(await creditEntries(), entries + 1);
    const back = await browser.get(`/portal/add-credit/${t.id}/return?result=paid`);
    assert.match(back.text, /credit is on your balance/);
  });

  it("credits once when the events come in the other order, or all at once", async () => {
    const before = await balance();
    const a = await cardTopUp("10");
    const first = stripe.pay(a.session.id);
    assert.equal((await deliver(s.stack.gatewayUrl, first.succeeded)).status, 200);
    assert.equal((await deliver(s.stack.gatewayUrl, first.completed)).status, 200);
    const b = await cardTopUp("15");
    const second = stripe.pay(b.session.id);
    const all = await Promise.all(
      [second.completed, second.succeeded, second.completed, second.succeeded, second.completed].map((e) =>
        deliver(s.stack.gatewayUrl, e),
      ),
    );
    assert.deepEqual(
      all.map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
    assert.equal(await balance(), before + 25);
  });

  it("refuses an event whose signature does not match its body, 400, and moves nothing", async () => {
    const before = await balance();
    const t = await cardTopUp("30");
    const { completed } = stripe.pay(t.session.id);
    const tampered = completed.payload.replace('"amount_total": 3000', '"amount_total": 300000');
    assert.notEqual(tampered, completed.payload);
    const refusals = await Promise.all([
      deliver(s.stack.gatewayUrl, { payload: tampered, signature: completed.signature }),
      deliver(s.stack.gatewayUrl, {
        payload: completed.payload,
        signature: sign(completed.payload, "whsec_other"),
      }),
      deliver(s.stack.gatewayUrl, { payload: completed.payload, signature: "" }),
      deliver(s.stack.gatewayUrl, { payload: "not json", signature: sign("not json") }),
    ]);
    assert.deepEqual(
      refusals.map((r) => [r.status, r.body?.code]),
      Array(4).fill([400, "BAD_REQUEST"]),
    );
    assert.equal(await balance(), before);
    assert.equal((await deliver(s.stack.gatewayUrl, completed)).status, 200);
    assert.equal(await balance(), before + 30);
  });

  it("takes a refund back once, ignores an older refund total, and records a dispute without moving money", async () => {
    const t = await cardTopUp("50");
    const { completed } = stripe.pay(t.session.id);
    await deliver(s.stack.gatewayUrl, completed);
    const before = await balance();
    const partial = stripe.refund(t.session.id, 1000);
    const more = stripe.refund(t.session.id, 2000);
    // An event of the first refund total arriving late (Stripe does not promise order).
    const late = stripe.refund(t.session.id, 1000);
    for (const e of [partial, partial, more, more, late]) {
      assert.equal((await deliver(s.stack.gatewayUrl, e)).status, 200);
    }
    assert.equal(await balance(), before - 20);
    const dispute = stripe.dispute(t.session.id);
    assert.equal((await deliver(s.stack.gatewayUrl, dispute)).status, 200);
    assert.equal(await balance(), before - 20);
    const [row] = await sql<{ refunded: string; disputed: boolean }[]>`
      select refunded::text, disputed from billing.top_ups where id = ${t.id}`;
    assert.deepEqual(row, { refunded: "20.0000", disputed: true });
    const events = await sql<{ type: string; outcome: string }[]>`
      select type, outcome from billing.provider_events where top_up_id = ${t.id} order by received_at`;
    assert.deepEqual(
      events.map((e) => `${e.type}:${e.outcome}`),
      [
        "checkout.session.completed:credited",
        "charge.refunded:refund_debited",
        "charge.refunded:refund_debited",
        "charge.refunded:recorded",
        "charge.dispute.created:recorded",
      ],
    );
  });

  it("credits only what a refund reported before the payment left, and links the top-up to its own ledger entry or none", async () => {
    const entryOf = async (id: string) =>
      (
        await sql<{ received: string; amount: string | null }[]>`
          select t.received::text, l.amount::text from billing.top_ups t
          left join billing.ledger l on l.id = t.ledger_id where t.id = ${id}`
      )[0];
    const part = await cardTopUp("40");
    const partPaid = stripe.pay(part.session.id).completed;
    const before = await balance();
    assert.equal((await deliver(s.stack.gatewayUrl, stripe.refund(part.session.id, 1000))).status, 200);
    assert.equal((await deliver(s.stack.gatewayUrl, partPaid)).status, 200);
    assert.equal(await balance(), before + 30);
    assert.deepEqual(await entryOf(part.id), { received: "40.0000", amount: "30.0000" });
    const whole = await cardTopUp("25");
    const wholePaid = stripe.pay(whole.session.id).completed;
    assert.equal((await deliver(s.stack.gatewayUrl, stripe.refund(whole.session.id, 2500))).status, 200);
    assert.equal((await deliver(s.stack.gatewayUrl, wholePaid)).status, 200);
    assert.equal(await balance(), before + 30, "nothing left to credit");
    assert.deepEqual(await entryOf(whole.id), { received: "25.0000", amount: null }, "no entry of another's");
  });

  it("answers 200 to an event type it does not act on, and records nothing", async () => {
    const e = stripe.event("customer.created", { id: "cus_test_1", object: "customer" });
    const r = await deliver(s.stack.gatewayUrl, e);
    assert.deepEqual([r.status, (r.body?.data as { acted?: boolean } | undefined)?.acted], [200, false]);
    const [{ n }] = await sql<
      { n: number }[]
    >`select count(*)::int as n from billing.provider_events where event_id = ${e.id}`;
    assert.equal(n, 0);
  });

  it("the checkout's cancel return only shows the state; the page's cancel button (a POST) expires the session", async () => {
    const t = await cardTopUp("12");
    // Opened in another tab, prefetched or reloaded: a GET cancels nothing.
    for (let i = 0; i < 2; i++) {
      const page = await browser.get(`/portal/add-credit/${t.id}/return?result=cancelled`);
      assert.equal(page.status, 200);
      assert.match(page.text, /The payment is still open/);
      assert.ok(
        page.text.includes(`action="/portal/add-credit/${t.id}/cancel"`),
        "the page offers the cancel form",
      );
    }
    assert.equal(stripe.sessions.get(t.session.id)?.status, "open");
    const state = async () =>
      (await sql<{ status: string }[]>`select status from billing.top_ups where id = ${t.id}`)[0].status;
    assert.equal(await state(), "pending");
    const page = await browser.get(`/portal/add-credit/${t.id}/return?result=cancelled`);
    const form = page.text.slice(page.text.indexOf(`action="/portal/add-credit/${t.id}/cancel"`));
    const r = await browser.post(`/portal/add-credit/${t.id}/cancel`, {
      _csrf: csrfIn(page.text),
      _once: /name="_once" value="([^"]+)"/.exec(form)?.[1] ?? "",
    });
    assert.equal(r.status, 303, r.text);
    const after = await browser.get(r.location);
    assert.match(after.text, /cancelled; nothing was charged/);
    assert.equal(stripe.sessions.get(t.session.id)?.status, "expired");
    assert.equal(await state(), "cancelled");
  });

  it("applies a cool-down to new top-ups: five in ten minutes, then 429 without a Checkout Session", async () => {
    for (let i = 0; i < 5; i++) await cardTopUp("5");
    const sessions = stripe.sessions.size;
    const form = await browser.get("/portal/add-credit");
    const once = (kind: string) =>
      /name="_once" value="([^"]+)"/.exec(
        form.text.slice(form.text.indexOf(`action="/portal/add-credit/${kind}"`)),
      )?.[1] ?? "";
    const card = await browser.post("/portal/add-credit/card", {
      _csrf: csrfIn(form.text),
      _once: once("card"),
      "card-amount": "5",
    });
    assert.equal(card.status, 429, card.text);
    assert.ok(Number(card.headers.get("retry-after")) > 0, "Retry-After says when");
    assert.match(card.text, /Too many top-ups/);
    assert.equal(stripe.sessions.size, sessions, "no Checkout Session was opened");
    // The window is the person's, whatever the method.
    const bank = await browser.post("/portal/add-credit/bank", {
      _csrf: csrfIn(form.text),
      _once: once("bank"),
      "bank-amount": "50",
    });
    assert.equal(bank.status, 429, bank.text);
    const [{ n }] = await sql<{ n: number }[]>`
      select count(*)::int as n from billing.top_ups where person_id = ${owner.personId}`;
    assert.equal(n, 5);
  });

  it("refuses a fraction of a whole-unit currency (5.50 ISK, 5.5 JPY) beside the amount, before Stripe is asked", async () => {
    for (const currency of ["ISK", "JPY"]) {
      ({ browser, ...owner } = await newPayer(currency));
      const form = await browser.get("/portal/add-credit");
      assert.match(form.text, /Pay by card/);
      const asked = stripe.requests.length;
      const r = await browser.post("/portal/add-credit/card", {
        _csrf: csrfIn(form.text),
        _once:
          /name="_once" value="([^"]+)"/.exec(
            form.text.slice(form.text.indexOf('action="/portal/add-credit/card"')),
          )?.[1] ?? "",
        "card-amount": "5.50",
      });
      assert.equal(r.status, 400, `${currency}: ${r.text.slice(0, 300)}`);
      assert.match(r.text, new RegExp(`whole number of ${currency}`));
      assert.match(
        r.text,
        /id="f-card-amount"[^>]*aria-invalid="true"/,
        "the refusal names the amount field",
      );
      assert.equal(stripe.requests.length, asked, "Stripe was not asked");
    }
    // Whole krónur go through, counted in hundredths as Stripe's API counts ISK.
    ({ browser, ...owner } = await newPayer("ISK"));
    const t = await cardTopUp("500");
    assert.deepEqual([t.session.amount_total, t.session.currency], [50000, "isk"]);
  });

  /** Spends `amount` of the payer's credit on an order (a monthly VPS at that price). */
  async function spend(amount: string) {
    const product = await newProduct("vps", { monthly: amount }, "EUR", staffBilling.client);
    const r = await s.call("POST", "/orders", owner.key, { productId: product.id, billingCycle: "monthly" });
    assert.equal(r.status, 201, r.text);
  }
  /** A card top-up paid and credited. */
  async function paidTopUp(amount: string) {
    const t = await cardTopUp(amount);
    assert.equal((await deliver(s.stack.gatewayUrl, stripe.pay(t.session.id).completed)).status, 200);
    return t;
  }
  const outcomes = async (topUpId: string) =>
    (
      await sql<{ type: string; outcome: string }[]>`
        select type, outcome from billing.provider_events where top_up_id = ${topUpId} order by received_at`
    ).map((e) => `${e.type}:${e.outcome}`);
  const disputeRow = async (topUpId: string) =>
    (
      await sql<{ status: string; funds: string; taken: string; shortfall: string }[]>`
        select status, funds, taken::text, shortfall::text from billing.card_disputes where top_up_id = ${topUpId}`
    )[0];

  it("takes a dispute's withdrawn funds back from the balance up to what is left, records the shortfall, and gives back what was taken when the dispute is won, once", async () => {
    const t = await paidTopUp("50");
    await spend("30");
    assert.equal(await balance(), 20);
    assert.equal((await deliver(s.stack.gatewayUrl, stripe.dispute(t.session.id, "created"))).status, 200);
    assert.equal(await balance(), 20, "an opened dispute moves no money");
    const withdrawn = stripe.dispute(t.session.id, "funds_withdrawn");
    for (const e of [withdrawn, withdrawn]) assert.equal((await deliver(s.stack.gatewayUrl, e)).status, 200);
    assert.equal(await balance(), 0, "the credit bought with the disputed money is no longer spendable");
    assert.deepEqual(await disputeRow(t.id), {
      status: "needs_response",
      funds: "withdrawn",
      taken: "20.0000",
      shortfall: "30.0000",
    });
    // Won: Stripe sends funds_reinstated and closed (won); each replayed. What was taken comes back once.
    const reinstated = stripe.dispute(t.session.id, "funds_reinstated");
    const won = stripe.dispute(t.session.id, "closed", { status: "won" });
    for (const e of [reinstated, won, reinstated, won]) {
      assert.equal((await deliver(s.stack.gatewayUrl, e)).status, 200);
    }
    assert.equal(await balance(), 20);
    assert.deepEqual(await disputeRow(t.id), {
      status: "won",
      funds: "reinstated",
      taken: "20.0000",
      shortfall: "0.0000",
    });
    assert.deepEqual(await outcomes(t.id), [
      "checkout.session.completed:credited",
      "charge.dispute.created:recorded",
      "charge.dispute.funds_withdrawn:dispute_debited",
      "charge.dispute.funds_reinstated:dispute_reinstated",
      "charge.dispute.closed:recorded",
    ]);
  });

  it("takes the credit back once for a lost dispute, whether or not funds_withdrawn was heard first", async () => {
    const t = await paidTopUp("40");
    const lost = stripe.dispute(t.session.id, "closed", { status: "lost" });
    assert.equal((await deliver(s.stack.gatewayUrl, lost)).status, 200);
    assert.equal(await balance(), 0);
    // The withdrawal's own event arriving late takes nothing more.
    assert.equal(
      (await deliver(s.stack.gatewayUrl, stripe.dispute(t.session.id, "funds_withdrawn"))).status,
      200,
    );
    assert.equal(await balance(), 0);
    assert.deepEqual(await disputeRow(t.id), {
      status: "needs_response",
      funds: "withdrawn",
      taken: "40.0000",
      shortfall: "0.0000",
    });
    const [{ n }] = await sql<{ n: number }[]>`
      select count(*)::int as n from billing.ledger where person_id = ${owner.personId} and description = 'Card payment disputed'`;
    assert.equal(n, 1);
  });

  it("flags a paid session in another currency than the top-up's for a person: nothing credited, a warning without secrets, a metric", async () => {
    const t = await cardTopUp("20");
    const before = Number(
      sample(await metricsText(s, "billing"), "billing_card_events_total", { outcome: "flagged" }) ?? 0,
    );
    t.session.currency = "usd";
    const { completed } = stripe.pay(t.session.id);
    assert.equal((await deliver(s.stack.gatewayUrl, completed)).status, 200);
    assert.equal(await balance(), 0);
    assert.deepEqual(await outcomes(t.id), ["checkout.session.completed:flagged"]);
    const line = await eventually(async () => logs.billing.find((l) => l.raw.includes(completed.id)), 10_000);
    assert.ok(line, "billing logged the event");
    assert.equal(line.level, "warn", line.raw);
    assert.match(line.raw, /USD/);
    for (const secret of [TEST_SECRET_KEY, TEST_WEBHOOK_SECRET, completed.signature]) {
      assert.ok(!line.raw.includes(secret), "no secret in the log line");
    }
    const after = Number(
      sample(await metricsText(s, "billing"), "billing_card_events_total", { outcome: "flagged" }) ?? 0,
    );
    assert.equal(after, before + 1);
  });

  it("shows staff the disputed, refunded and short card payments and the flagged and unmatched events (Card payments)", async () => {
    const email = `${unique("staff")}@example.test`;
    const { staff } = await s.auth.createStaff({ name: "Card Desk", email, permissions: ["view_clients"] });
    const { token } = await portal.client.createPasswordLink({ realm: Realm.ADMIN, subjectId: staff!.id });
    await portal.client.setPassword({ token, password: PASSWORD });
    const admin = await signInVisitor(s.stack.gatewayUrl, "admin", email);

    const disputed = await paidTopUp("45");
    await spend("40");
    await deliver(s.stack.gatewayUrl, stripe.dispute(disputed.session.id, "funds_withdrawn"));
    const disputeId = (
      await sql<{ dispute_id: string }[]>`
      select dispute_id from billing.card_disputes where top_up_id = ${disputed.id}`
    )[0].dispute_id;
    const refunded = await paidTopUp("15");
    await deliver(s.stack.gatewayUrl, stripe.refund(refunded.session.id, 500));
    const foreign = await cardTopUp("25");
    foreign.session.currency = "gbp";
    const flagged = stripe.pay(foreign.session.id).completed;
    await deliver(s.stack.gatewayUrl, flagged);
    const stray = stripe.event("payment_intent.succeeded", {
      id: "pi_test_nobodys",
      object: "payment_intent",
      amount_received: 700,
      currency: "eur",
      metadata: {},
      status: "succeeded",
    });
    await deliver(s.stack.gatewayUrl, stray);

    const page = await admin.get("/admin/card-payments");
    assert.equal(page.status, 200, page.text.slice(0, 300));
    assert.match(
      page.text,
      /href="\/admin\/card-payments"[^>]*>Card payments/,
      "the panel's menu links the page",
    );
    assert.ok(page.text.includes(disputeId), "the dispute is listed");
    // 45 paid, 40 spent: the dispute took back 5 and is 40 short.
    assert.match(page.text, /taken back 5\.00 EUR/);
    assert.match(page.text, /<strong>40\.00 EUR<\/strong>/);
    assert.match(page.text, /5\.00 EUR<\/td>/, "the refunded amount");
    assert.ok(page.text.includes(flagged.id), "the flagged event is listed");
    assert.ok(page.text.includes(stray.id), "the unmatched event is listed");
    const short = await admin.get("/admin/card-payments?show=shortfall");
    assert.ok(short.text.includes(disputeId));
    assert.ok(!short.text.includes("15.00 EUR"), "a refund taken back in full is no shortfall");
  });

  it("refuses the page and the form to a team member without Pay Invoices", async () => {
    const email = `${unique("viewer")}@example.test`;
    const { person } = await s.auth.createPerson({
      customerId: owner.customerId,
      name: "Viewer",
      email,
      permissions: ["view_billing"],
    });
    const { token } = await portal.client.createPasswordLink({ realm: Realm.PORTAL, subjectId: person!.id });
    await portal.client.setPassword({ token, password: PASSWORD });
    const member = await signInVisitor(s.stack.gatewayUrl, "portal", email);
    const page = await member.get("/portal/add-credit");
    assert.equal(page.status, 403);
    const sessions = stripe.sessions.size;
    const form = await member.get("/portal/balance");
    const r = await member.post("/portal/add-credit/card", {
      _csrf: csrfIn(form.text),
      _once: newToken(),
      "card-amount": "20",
    });
    assert.equal(r.status, 403);
    assert.equal(stripe.sessions.size, sessions);
  });

  it("answers 503 while billing is unreachable, so Stripe sends the event again", async () => {
    const t = await cardTopUp("5");
    const { completed } = stripe.pay(t.session.id);
    const billing = s.stack.procs.get("billing");
    assert.ok(billing);
    const exited = new Promise((r) => billing.once("exit", r));
    billing.kill("SIGKILL");
    await exited;
    const r = await deliver(s.stack.gatewayUrl, completed);
    assert.deepEqual([r.status, r.body?.code], [503, "SERVICE_UNAVAILABLE"]);
  });
});
