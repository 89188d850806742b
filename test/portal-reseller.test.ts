/**
 * The reseller panel in the portal (issue 29 §5), over HTTP as a browser without JavaScript sends
 * it: a partner's customers' orders and services from the signed-in partner's session, a payment
 * retried, services suspended, unsuspended and terminated through the signed routes' own checks
 * (another partner's order is not found, a pending partner changes nothing, a member without the
 * permission is refused), and the live event stream on a page.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { BillingCycle, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { OrderPaymentMode } from "@hb/contracts/hb/billing/v1/orders_pb";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { addCredit, auth, billing, eventually, GATEWAY, newProduct, unique } from "./helpers.ts";
import { csrfIn, portalMember, portalOwner, signInVisitor } from "./portal-pages.ts";
import { publishServiceEvent } from "./support/service-events.ts";

const onceIn = (html: string) => /name="_once" value="([^"]+)"/.exec(html)?.[1] ?? "";
const noticeIn = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1] ?? "";

/** A partner whose owner is signed in to the portal. */
async function partnerSignedIn(status = PartnerStatus.ACTIVE) {
  const owner = await portalOwner();
  await auth.createPartner({ customerId: owner.customerId, status });
  const acct = { customerId: owner.customerId, ownerId: owner.ownerId, key: "", keyId: "" };
  const caller = { customerId: owner.customerId, personId: owner.ownerId, isOwner: true };
  return { owner, acct, caller, v: await signInVisitor(GATEWAY, "portal", owner.email) };
}
type Partner = Awaited<ReturnType<typeof partnerSignedIn>>;

/** An order placed for the partner's end customer, as their system would place it. */
async function resellerOrder(p: Partner, mode: OrderPaymentMode, hostname = unique("r")) {
  const product = await newProduct("vps", { monthly: "15.0000" });
  const ext = unique("shop");
  const { placed } = await billing.createResellerOrder({
    caller: p.caller,
    externalOrderId: ext,
    externalCustomerId: "cust-77",
    paymentMode: mode,
    items: [{ productId: product.id, billingCycle: BillingCycle.MONTHLY, hostname }],
  });
  return { order: placed!.order!, ext, hostname };
}

/** The order's first service once it is active (provisioned by the simulator). */
const activeService = (p: Partner, orderId: string) =>
  eventually(async () => {
    const s = (await billing.getResellerOrder({ caller: p.caller, orderId })).order!.services[0];
    return s?.status === ServiceStatus.ACTIVE ? s : undefined;
  }, 30_000);

const statusOf = async (p: Partner, orderId: string) =>
  (await billing.getResellerOrder({ caller: p.caller, orderId })).order!.services[0].status;

/** Sends the form of the page at `path` to `to` with `fields`. */
async function send(v: Partner["v"], path: string, to: string, fields: Record<string, string> = {}) {
  const shown = await v.get(path);
  assert.equal(shown.status, 200, shown.text);
  return v.post(to, { _csrf: csrfIn(shown.text), _once: onceIn(shown.text), ...fields });
}

describe("the reseller panel", () => {
  it("lists the partner's customers' orders and shows one with its services; another partner's is not found", async () => {
    const p = await partnerSignedIn();
    await addCredit(p.acct, "100");
    const { order, ext, hostname } = await resellerOrder(p, OrderPaymentMode.CREDIT);
    const list = await p.v.get("/portal/reseller/orders");
    assert.equal(list.status, 200);
    assert.match(list.text, new RegExp(`href="/portal/reseller/orders/${order.id}">${order.number}<`));
    assert.match(list.text, new RegExp(ext));
    const found = await p.v.get(`/portal/reseller/orders?externalOrderId=${ext}`);
    assert.match(found.text, new RegExp(order.number));
    const none = await p.v.get("/portal/reseller/orders?externalOrderId=nothing-of-mine");
    assert.match(none.text, /No order has this id of yours/);

    const detail = await p.v.get(`/portal/reseller/orders/${order.id}`);
    assert.equal(detail.status, 200);
    assert.match(detail.text, new RegExp(hostname));
    assert.match(detail.text, /cust-77/);
    const services = await p.v.get("/portal/reseller/services");
    assert.match(services.text, new RegExp(`>${hostname}</a>`));

    const other = await partnerSignedIn();
    assert.equal((await other.v.get(`/portal/reseller/orders/${order.id}`)).status, 404);
    assert.doesNotMatch((await other.v.get("/portal/reseller/orders")).text, new RegExp(order.number));
  });

  it("retries an unpaid order's payment from the partner's credit", async () => {
    const p = await partnerSignedIn();
    const { order } = await resellerOrder(p, OrderPaymentMode.INVOICE);
    const page = `/portal/reseller/orders/${order.id}`;
    const short = await send(p.v, page, `${page}/retry-payment`);
    assert.equal(short.status, 303);
    assert.match((await p.v.get(short.location)).text, /Insufficient credit/);
    await addCredit(p.acct, "100");
    const paid = await send(p.v, page, `${page}/retry-payment`);
    assert.equal(paid.status, 303);
    assert.match(
      noticeIn((await p.v.get(paid.location)).text),
      /Payment taken; your credit is now 85\.00 EUR/,
    );
    assert.doesNotMatch((await p.v.get(page)).text, /Retry payment/);
  });

  it("suspends, unsuspends and terminates a customer's service (terminate asks first, naming it)", async () => {
    const p = await partnerSignedIn();
    await addCredit(p.acct, "100");
    const { order, hostname } = await resellerOrder(p, OrderPaymentMode.CREDIT);
    const svc = await activeService(p, order.id);
    const page = `/portal/reseller/services/${svc.id}`;

    const suspended = await send(p.v, page, `${page}/suspend`, { reason: "unpaid at the shop" });
    assert.equal(suspended.status, 303);
    assert.equal(await statusOf(p, order.id), ServiceStatus.SUSPENDED);
    assert.match(noticeIn((await p.v.get(suspended.location)).text), new RegExp(`${hostname} is suspended`));

    assert.equal((await send(p.v, page, `${page}/unsuspend`)).status, 303);
    assert.equal(await statusOf(p, order.id), ServiceStatus.ACTIVE);

    const ask = await p.v.get(`${page}/terminate`);
    assert.equal(ask.status, 200);
    assert.match(ask.text, new RegExp(`Terminate ${hostname}\\?`));
    assert.equal(await statusOf(p, order.id), ServiceStatus.ACTIVE, "asking changes nothing");
    assert.equal((await send(p.v, `${page}/terminate`, `${page}/terminate`)).status, 303);
    assert.equal(await statusOf(p, order.id), ServiceStatus.TERMINATED);
  });

  it("keeps the signed routes' checks: a suspended partner reads but changes nothing, a member needs the permission, a non-partner is refused", async () => {
    const p = await partnerSignedIn();
    await addCredit(p.acct, "100");
    const { order } = await resellerOrder(p, OrderPaymentMode.CREDIT);
    const svc = await activeService(p, order.id);
    const page = `/portal/reseller/services/${svc.id}`;
    const form = await p.v.get(page);
    await auth.setPartnerStatus({ customerId: p.owner.customerId, status: PartnerStatus.SUSPENDED });
    const refused = await p.v.post(`${page}/suspend`, { _csrf: csrfIn(form.text), _once: onceIn(form.text) });
    assert.equal(refused.status, 303);
    assert.match((await p.v.get(refused.location)).text, /partner profile is suspended/);
    assert.equal(await statusOf(p, order.id), ServiceStatus.ACTIVE, "nothing changed");
    assert.equal((await p.v.get("/portal/reseller/orders")).status, 200, "reading stays");

    const member = await portalMember(p.owner.customerId, ["view_invoices"]);
    const mv = await signInVisitor(GATEWAY, "portal", member.email);
    assert.equal((await mv.get("/portal/reseller/orders")).status, 403);
    assert.doesNotMatch((await mv.get("/portal/invoices")).text, /href="\/portal\/reseller/, "no menu item");

    const viewer = await portalMember(p.owner.customerId, ["view_services"]);
    const vv = await signInVisitor(GATEWAY, "portal", viewer.email);
    const listed = await vv.get("/portal/reseller/orders");
    assert.equal(listed.status, 200);
    assert.match(
      listed.text,
      /<a href="\/portal\/reseller\/orders"[^>]*>Reseller<\/a>/,
      "the menu leads to the panel",
    );
    assert.match(listed.text, new RegExp(order.number));

    const stranger = await portalOwner();
    const sv = await signInVisitor(GATEWAY, "portal", stranger.email);
    assert.equal((await sv.get("/portal/reseller/services")).status, 403);
    assert.equal((await sv.get("/portal/reseller/stream/events")).status, 403);
  });

  it("places the cart's lines for an end customer under the partner's own order id, once", async () => {
    const p = await partnerSignedIn();
    await addCredit(p.acct, "100");
    const product = await newProduct("vps", { monthly: "15.0000" });
    const noCart = await p.v.get("/portal/reseller/orders");
    assert.match(noCart.text, /Put the products in <a href="\/portal\/cart">the cart<\/a> first/);
    const added = await send(p.v, `/portal/cart/add/${product.id}`, `/portal/cart/add/${product.id}`, {
      billingCycle: "monthly",
      quantity: "2",
    });
    assert.equal(added.status, 303);

    const ext = unique("shop");
    const fields = { externalOrderId: ext, externalCustomerId: "cust-9", paymentMode: "credit" };
    const placed = await send(p.v, "/portal/reseller/orders", "/portal/reseller/orders", fields);
    assert.equal(placed.status, 303);
    const [order] = (await billing.listResellerOrders({ caller: p.caller, externalOrderId: ext })).orders;
    assert.ok(order, "the order is the partner's, under its own id");
    assert.equal(order.services.length, 2);
    assert.match(placed.location, new RegExp(`^/portal/reseller/orders/${order.id}\\?done=`));
    assert.match(noticeIn((await p.v.get(placed.location)).text), /paid from your credit/);
    assert.match((await p.v.get("/portal/cart")).text, /Your cart is empty/);

    // The same order id again is the API's conflict, shown on the form with what was typed.
    await send(p.v, `/portal/cart/add/${product.id}`, `/portal/cart/add/${product.id}`, {
      billingCycle: "monthly",
    });
    const twice = await send(p.v, "/portal/reseller/orders", "/portal/reseller/orders", fields);
    assert.equal(twice.status, 409);
    assert.match(twice.text, new RegExp(`An order with externalOrderId &quot;${ext}&quot; already exists`));
    assert.match(twice.text, new RegExp(`value="${ext}"`));
    assert.equal(
      (await billing.listResellerOrders({ caller: p.caller, externalOrderId: ext })).orders.length,
      1,
    );
  });

  it("refuses what the signed routes' schemas refuse, with the API's words on the page", async () => {
    const p = await partnerSignedIn();
    await addCredit(p.acct, "100");
    const { order } = await resellerOrder(p, OrderPaymentMode.CREDIT);
    const svc = await activeService(p, order.id);
    const page = `/portal/reseller/services/${svc.id}`;
    const long = await send(p.v, page, `${page}/suspend`, { reason: "r".repeat(501) });
    assert.equal(long.status, 303);
    assert.match(
      (await p.v.get(long.location)).text,
      /reason Too big: expected string to have &lt;=500 characters/,
    );
    assert.equal(await statusOf(p, order.id), ServiceStatus.ACTIVE);

    const product = await newProduct("vps", { monthly: "15.0000" });
    await send(p.v, `/portal/cart/add/${product.id}`, `/portal/cart/add/${product.id}`, {
      billingCycle: "monthly",
    });
    const blank = await send(p.v, "/portal/reseller/orders", "/portal/reseller/orders", {
      externalOrderId: "",
      paymentMode: "cash",
    });
    assert.equal(blank.status, 400);
    assert.match(blank.text, /id="f-externalOrderId-error">is required</);
    assert.match(blank.text, /must be credit or invoice/);
  });

  it("shows the partner's events live on a page, as the API's stream raises them", async () => {
    const p = await partnerSignedIn();
    const shown = await p.v.get("/portal/reseller/stream");
    assert.equal(shown.status, 200);
    assert.match(shown.text, /data-event-stream="\/portal\/reseller\/stream\/events"/);

    const stop = new AbortController();
    const cookie = [...p.v.jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(`${GATEWAY}/portal/reseller/stream/events`, {
      headers: { cookie, accept: "text/event-stream" },
      signal: stop.signal,
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    let text = "";
    const reading = (async () => {
      try {
        for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) text += chunk;
      } catch {
        // closed by the test
      }
    })();
    try {
      await eventually(async () => text.includes("event: ready"), 10_000);
      const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
      const hostname = unique("live");
      let id: string;
      try {
        id = await publishServiceEvent(jetstream(nc), process.env.HB_NS ?? "", p.owner.customerId, {
          hostname,
        });
      } finally {
        await nc.close();
      }
      await eventually(async () => text.includes(`id: ${id}`), 15_000);
      const data = /event: delivery\ndata: (.*)\n/.exec(text)?.[1] ?? "{}";
      const delivery = JSON.parse(data) as { event: string; body: string };
      assert.equal(delivery.event, "service.suspended");
      assert.match(delivery.body, new RegExp(hostname));
      assert.doesNotMatch(text, /signature/i, "no signed headers on a page");
    } finally {
      stop.abort();
      await reading;
    }
  });

  it("ends the live stream when the partner signs out, as the console closes, and it does not open again", async () => {
    const p = await partnerSignedIn();
    const cookie = [...p.v.jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const stop = new AbortController();
    const res = await fetch(`${GATEWAY}/portal/reseller/stream/events`, {
      headers: { cookie, accept: "text/event-stream" },
      signal: stop.signal,
    });
    assert.equal(res.status, 200);
    let text = "";
    let ended = false;
    const reading = (async () => {
      try {
        for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) text += chunk;
        ended = true;
      } catch {
        // closed by the test
      }
    })();
    try {
      await eventually(async () => text.includes("event: ready"), 10_000);
      const out = await p.v.post("/portal/sign-out", {});
      assert.equal(out.status, 303);
      // The gateway ends the response itself (the test's own abort comes only after the deadline).
      await eventually(async () => ended, 10_000);
      assert.match(text, /event: ended\ndata: \{"reason":"signed-out"\}/);
      // And the page's stream is not opened again with the ended session.
      const again = await fetch(`${GATEWAY}/portal/reseller/stream/events`, {
        headers: { cookie, accept: "text/event-stream" },
        redirect: "manual",
      });
      await again.body?.cancel();
      assert.equal(again.status, 303);
    } finally {
      stop.abort();
      await reading;
    }
  });
});
