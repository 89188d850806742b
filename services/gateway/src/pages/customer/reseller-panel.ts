import { PartnerStatus, PartnerStatusSchema } from "@hb/contracts/hb/auth/v1/partners_pb";
import { enumWord, isUuid } from "@hb/platform";
import type { Request, Response, Router } from "express";
import type { z } from "zod";
import type {
  resellerOrder,
  resellerOrderCreation,
  resellerOrderList,
  resellerService,
  resellerServiceList,
  resellerServiceState,
} from "../../wire/reseller.ts";
import { type FormState, field } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { sessionOf } from "../session.ts";
import { operation, type PageApi, Refused } from "./api.ts";
import { orderItemsOf } from "./cart.ts";
import { action, bodyText, doneOf, fieldErrors, type Kit, page } from "./kit.ts";
import { may, type PageAction, pageAction } from "./page-table.ts";
import { at, badge, buttonForm, facts, formTokens, money, table } from "./ui.ts";

type Order = z.infer<typeof resellerOrder>;
type Service = z.infer<typeof resellerService>;

/**
 * The reseller panel: a partner's end customers' orders and services, from the signed-in
 * partner's session. Each page calls the signed reseller routes in process (in-process.ts), where
 * the session stands in for the key and the signature, and the route's own checks decide (scope,
 * the person's permission, the partner status: a pending or suspended partner reads but changes
 * nothing), so the page can do exactly what the partner's own system can through the API.
 */
const OPS = {
  orders: operation("GET", "/reseller/orders", "/portal/reseller/orders"),
  place: operation("POST", "/reseller/orders", "/portal/reseller/orders"),
  order: operation("GET", "/reseller/orders/:orderId", "/portal/reseller/orders/:orderId"),
  retry: operation(
    "POST",
    "/reseller/orders/:orderId/retry-payment",
    "/portal/reseller/orders/:orderId/retry-payment",
  ),
  services: operation("GET", "/reseller/services", "/portal/reseller/services"),
  suspend: operation("POST", "/reseller/services/:serviceId/suspend", "/portal/reseller/services/:serviceId"),
  unsuspend: operation(
    "POST",
    "/reseller/services/:serviceId/unsuspend",
    "/portal/reseller/services/:serviceId",
  ),
  terminate: operation(
    "POST",
    "/reseller/services/:serviceId/terminate",
    "/portal/reseller/services/:serviceId/terminate",
  ),
};

const STATE_ACTIONS = ["suspend", "unsuspend", "terminate"] as const;
type StateAction = (typeof STATE_ACTIONS)[number];

/** The panel's page actions (page-table.ts): each performs its signed route, needing what it needs. */
const PLACE = pageAction({
  path: "/reseller/orders",
  ops: [OPS.place],
  redirect: "/portal/reseller/orders/:id",
});
const RETRY = pageAction({
  path: "/reseller/orders/:orderId/retry-payment",
  ops: [OPS.retry],
  redirect: "/portal/reseller/orders/:orderId",
});
const STATE = Object.fromEntries(
  STATE_ACTIONS.map((a) => [
    a,
    pageAction({
      path: `/reseller/services/:serviceId/${a}`,
      ops: [OPS[a]],
      redirect: "/portal/reseller/services/:serviceId",
    }),
  ]),
) as Record<StateAction, PageAction>;

/**
 * A write control is drawn when the page table says the person may use it (permission, account
 * not suspended) and the partner profile is active: the signed routes refuse a pending or
 * suspended partner's writes, so the page does not offer them.
 */
const offers = (res: Response, a: PageAction) =>
  may(sessionOf(res), a) && sessionOf(res).partnerStatus === PartnerStatus.ACTIVE;

/** A refusal without a form says the API's words for each field too (the reason's bound). */
const withDetails = (err: unknown): never => {
  if (err instanceof Refused && err.details.length)
    throw new Refused(err.status, {
      success: false,
      code: err.code,
      error: `${err.message}: ${err.details.map((d) => `${d.field} ${d.message}`).join("; ")}`,
    });
  throw err;
};
const DONE: Record<StateAction, string> = {
  suspend: "suspended",
  unsuspend: "unsuspended",
  terminate: "terminated",
};

/** Which state changes a service in this status can take (the API refuses the others). */
const offered = (s: Service): StateAction[] =>
  s.status === "terminated" || s.status === "cancelled"
    ? []
    : s.status === "suspended"
      ? ["unsuspend", "terminate"]
      : ["suspend", "terminate"];

/** Said on the panel's pages while the partner profile is not active (its writes are refused). */
const readOnly = (res: Response) =>
  sessionOf(res).partnerStatus === PartnerStatus.ACTIVE
    ? ""
    : html`<p class="warning">The reseller partner profile is ${enumWord(PartnerStatusSchema, sessionOf(res).partnerStatus)}: read access only.</p>`;

const panelNav = html`<nav class="subnav" aria-label="Reseller panel"><a href="/portal/reseller/orders">Orders</a> · <a href="/portal/reseller/services">Services</a> · <a href="/portal/reseller/stream">Live events</a> · <a href="/portal/reseller">Settings</a></nav>`;

const yours = (o: { external_order_id: string | null; external_customer_id: string | null }) =>
  [o.external_order_id, o.external_customer_id ? `customer ${o.external_customer_id}` : ""]
    .filter(Boolean)
    .join(", ");

const orderId = (req: Request) => String(req.params.orderId);
const serviceId = (req: Request) => String(req.params.serviceId);

export function resellerPanelRoutes(kit: Kit, router: Router): void {
  async function ordersPage(req: Request, res: Response, api: PageApi, f: FormState, status?: number) {
    const ext = typeof req.query.externalOrderId === "string" ? req.query.externalOrderId.slice(0, 200) : "";
    const [{ orders }, cart] = await Promise.all([
      api<z.infer<typeof resellerOrderList>>(OPS.orders, { query: { externalOrderId: ext } }).then(
        (r) => r.data,
      ),
      kit.once.carts.lines(sessionOf(res).customerId, sessionOf(res).subjectId),
    ]);
    const body = html`${panelNav}${readOnly(res)}
<form method="get" action="/portal/reseller/orders" class="filters">
<div class="field"><label for="f-ext">Your order id</label><input id="f-ext" name="externalOrderId" value="${ext}" maxlength="200"></div>
<button type="submit">Find</button></form>
${table(
  "Your customers' orders",
  ["Order", "Your ids", "Payment", "Provisioning", "Total", "Placed"],
  orders.map((o) => [
    html`<a href="/portal/reseller/orders/${o.id}">${o.order_number}</a>`,
    yours(o),
    badge(o.payment_status),
    badge(o.provisioning_status),
    money(o.total, o.currency),
    at(o.created_at),
  ]),
  ext
    ? "No order has this id of yours."
    : "No orders yet: orders your system places through the reseller API appear here.",
)}
${
  !offers(res, PLACE)
    ? ""
    : cart.length
      ? placeForm(
          f,
          cart.reduce((n, l) => n + l.quantity, 0),
          sessionOf(res).csrfToken,
        )
      : html`<h2>Place an order for a customer</h2><p>Put the products in <a href="/portal/cart">the cart</a> first; they can then be ordered here for one of your customers, under your own order id.</p>`
}`;
    kit.render(res, "Reseller orders", body, {
      ...(await doneOf(kit, req, res)),
      ...(status ? { status } : {}),
    });
  }
  page(kit, router, "/reseller/orders", (req, res, api) =>
    ordersPage(req, res, api, { values: {}, errors: {} }),
  );

  const placeValues = (req: Request) => ({
    externalOrderId: bodyText(req, "externalOrderId"),
    externalCustomerId: bodyText(req, "externalCustomerId"),
    paymentMode: bodyText(req, "paymentMode"),
  });
  // The cart's lines, placed through POST /reseller/orders (its cool-down, idempotency and the
  // partner's unique order id); the cart empties once the order is placed.
  action(
    kit,
    router,
    PLACE,
    {
      back: () => "/portal/reseller/orders",
      form: async (req, res, err, api) => {
        await ordersPage(req, res, api, fieldErrors(err, placeValues(req)), err.status);
        return true;
      },
    },
    async (req, res, api, token) => {
      const who = [sessionOf(res).customerId, sessionOf(res).subjectId] as const;
      const lines = await kit.once.carts.lines(...who);
      if (!lines.length)
        return { location: "/portal/reseller/orders", error: "Your cart is empty; nothing was ordered." };
      const r = await api<z.infer<typeof resellerOrderCreation>>(OPS.place, {
        body: { ...placeValues(req), items: orderItemsOf(lines) },
        token,
      });
      await kit.once.carts.clear(...who);
      return {
        location: `/portal/reseller/orders/${r.data.id}`,
        notice: r.data.settled
          ? "The order is placed and paid from your credit; the services are being set up."
          : "The order is placed; its invoice is raised.",
      };
    },
  );

  page(kit, router, "/reseller/orders/:orderId", async (req, res, api) => {
    if (!isUuid(orderId(req))) return notFound(kit, res, "order");
    const o = (await api<Order>(OPS.order, { params: { orderId: orderId(req) } })).data;
    const csrf = sessionOf(res).csrfToken;
    const body = html`${panelNav}${readOnly(res)}
${facts([
  ["Your order id", o.external_order_id],
  ["Your customer", o.external_customer_id],
  ["Payment", badge(o.payment_status)],
  ["Paid from", o.payment_mode === "credit" ? "your credit" : "an invoice"],
  ["Provisioning", badge(o.provisioning_status)],
  ["Failure", o.failure_reason],
  ["Total", money(o.total, o.currency)],
  ["Placed", at(o.created_at)],
])}
${
  o.payment_status === "unpaid" && offers(res, RETRY)
    ? html`<p>This order is not paid. Retrying charges what is due from your credit.</p>${buttonForm(`/portal/reseller/orders/${o.id}/retry-payment`, "Retry payment", csrf)}`
    : ""
}
<h2>Services</h2>
${table(
  "The order's services",
  ["Hostname", "Product", "Status", "Address"],
  o.services.map((s) => [
    html`<a href="/portal/reseller/services/${s.id}">${s.hostname || s.id}</a>`,
    s.product.name,
    badge(s.status),
    s.address ?? "—",
  ]),
  "This order has no services.",
)}`;
    kit.render(res, `Order ${o.order_number}`, body, await doneOf(kit, req, res));
  });

  action(
    kit,
    router,
    RETRY,
    { back: (req) => `/portal/reseller/orders/${orderId(req)}` },
    async (req, _res, api, token) => {
      const r = await api<Order & { credit_balance: number }>(OPS.retry, {
        params: { orderId: orderId(req) },
        token,
      });
      const paid = r.data.payment_status === "paid";
      return {
        location: `/portal/reseller/orders/${r.data.id}`,
        ...(paid
          ? { notice: `Payment taken; your credit is now ${money(r.data.credit_balance, r.data.currency)}.` }
          : { error: r.data.failure_reason ?? "The payment failed; add credit and retry." }),
      };
    },
  );

  page(kit, router, "/reseller/services", async (req, res, api) => {
    const { services } = (await api<z.infer<typeof resellerServiceList>>(OPS.services)).data;
    const body = html`${panelNav}${readOnly(res)}
${table(
  "Your customers' services",
  ["Hostname", "Product", "Status", "Address", "Your ids"],
  services.map((s) => [
    html`<a href="/portal/reseller/services/${s.id}">${s.hostname || s.id}</a>`,
    s.product.name,
    badge(s.status),
    s.address ?? "—",
    yours(s),
  ]),
  "No services yet.",
)}`;
    kit.render(res, "Reseller services", body, await doneOf(kit, req, res));
  });

  /** The API has no one-service read for partners: the detail is the list's row. */
  const serviceOf = async (api: PageApi, id: string) =>
    (await api<z.infer<typeof resellerServiceList>>(OPS.services)).data.services.find((s) => s.id === id);

  page(kit, router, "/reseller/services/:serviceId", async (req, res, api) => {
    const s = isUuid(serviceId(req)) ? await serviceOf(api, serviceId(req)) : undefined;
    if (!s) return notFound(kit, res, "service");
    const csrf = sessionOf(res).csrfToken;
    const can = offered(s).filter((a) => offers(res, STATE[a]));
    const body = html`${panelNav}${readOnly(res)}
${facts([
  ["Hostname", s.hostname],
  ["Product", s.product.name],
  ["Status", badge(s.status)],
  ["Address", s.address],
  ["Failure", s.failure_reason],
  [
    "Order",
    s.order_id
      ? html`<a href="/portal/reseller/orders/${s.order_id}">${s.external_order_id ?? "the order"}</a>`
      : undefined,
  ],
  ["Your customer", s.external_customer_id],
])}
${can.filter((a) => a !== "terminate").map((a) => stateForm(s, a, csrf))}
${can.includes("terminate") ? html`<p><a href="/portal/reseller/services/${s.id}/terminate" class="danger">Terminate ${s.hostname}…</a></p>` : ""}`;
    kit.render(res, s.hostname || "Service", body, await doneOf(kit, req, res));
  });

  // Terminating cannot be undone: the page asks first, naming the machine.
  page(kit, router, "/reseller/services/:serviceId/terminate", async (req, res, api) => {
    const s = isUuid(serviceId(req)) ? await serviceOf(api, serviceId(req)) : undefined;
    if (!s) return notFound(kit, res, "service");
    if (!offers(res, STATE.terminate) || !offered(s).includes("terminate"))
      return kit.render(
        res,
        "Not available",
        html`<p role="alert" class="error">This service cannot be terminated from here.</p>`,
        { status: 403 },
      );
    const body = html`<p class="warning"><strong>Terminating ${s.hostname} ends the service for good</strong>: the machine is removed and cannot be brought back.</p>
${stateForm(s, "terminate", sessionOf(res).csrfToken)}
<p><a href="/portal/reseller/services/${s.id}">Cancel</a></p>`;
    kit.render(res, `Terminate ${s.hostname}?`, body);
  });

  for (const a of STATE_ACTIONS) {
    action(
      kit,
      router,
      STATE[a],
      { back: (req) => `/portal/reseller/services/${serviceId(req)}` },
      async (req, _res, api, token) => {
        const r = await api<z.infer<typeof resellerServiceState>>(OPS[a], {
          params: { serviceId: serviceId(req) },
          body: { reason: bodyText(req, "reason") },
          token,
        }).catch(withDetails);
        return {
          location: `/portal/reseller/services/${r.data.id}`,
          notice: `${r.data.hostname || "The service"} is ${DONE[a]}.`,
        };
      },
    );
  }
}

/** Your order id, your customer's id and how it is paid, for the cart's lines. */
function placeForm(f: FormState, count: number, csrf: string): Html {
  const mode = f.values.paymentMode || "credit";
  return html`<h2>Place an order for a customer</h2><form method="post" action="/portal/reseller/orders" class="card" novalidate>${formTokens(csrf)}
${f.general ? html`<p class="error" role="alert">${f.general}</p>` : ""}
<p>Your cart holds ${count} ${count === 1 ? "service" : "services"} (<a href="/portal/cart">see the cart</a>).</p>
${field(f, "externalOrderId", "Your order id", { hint: "Required, unique among your orders: your shop's own id for this order." })}
${field(f, "externalCustomerId", "Your customer's id", { hint: "Optional: who the order is for, in your own system." })}
<fieldset class="field${f.errors.paymentMode ? " invalid" : ""}"><legend>Payment</legend>
${(
  [
    ["credit", "From your credit now"],
    ["invoice", "Raise an invoice"],
  ] as const
).map(
  ([v, label]) =>
    html`<div><input type="radio" id="mode-${v}" name="paymentMode" value="${v}"${v === mode ? html` checked` : ""}> <label for="mode-${v}">${label}</label></div>`,
)}
${f.errors.paymentMode ? html`<p class="error">${f.errors.paymentMode}</p>` : ""}
</fieldset>
<button type="submit">Place the order for your customer</button></form>`;
}

/** Suspend, unsuspend or terminate, with the optional reason the API records. */
function stateForm(s: Service, a: StateAction, csrf: string): Html {
  const label = `${a[0].toUpperCase()}${a.slice(1)} ${s.hostname}`;
  return html`<form method="post" action="/portal/reseller/services/${s.id}/${a}" class="card">${formTokens(csrf)}
<div class="field"><label for="reason-${a}">Reason (optional)</label><input id="reason-${a}" name="reason" maxlength="500"></div>
<button type="submit"${a === "unsuspend" ? "" : html` class="danger"`}>${label}</button></form>`;
}

function notFound(kit: Kit, res: Parameters<Kit["render"]>[0], what: string): void {
  kit.render(res, "Not found", html`<p role="alert" class="error">No such ${what} of yours.</p>`, {
    status: 404,
  });
}
