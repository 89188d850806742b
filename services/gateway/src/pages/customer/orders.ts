import { PAGE_SIZE } from "@hb/platform/paging";
import type { Request, Response, Router } from "express";
import type { z } from "zod";
import { orderQuantity } from "../../routes/orders.ts";
import type { addonList } from "../../wire/addon.ts";
import type { orderCreation, orderDetail, orderList } from "../../wire/order.ts";
import type { productDetail, productList } from "../../wire/product.ts";
import { type Html, html } from "../html.ts";
import { sessionOf } from "../session.ts";
import { operation, type PageApi, Refused } from "./api.ts";
import { numberedHostnames } from "./hostnames.ts";
import { action, bodyText, doneOf, fieldErrors, type Kit, page } from "./kit.ts";
import { documentStatus } from "./names.ts";
import { addonValues, chosenAddons, orderLineFields } from "./order-fields.ts";
import { may, pageAction } from "./page-table.ts";
import { agoInMinutes, type EarlierOrder } from "./repeat-order.ts";
import { at, badge, facts, formTokens, money, pageParam, pager, table } from "./ui.ts";

const OPS = {
  products: operation("GET", "/products", "/portal/order"),
  product: operation("GET", "/products/:id", "/portal/order/:productId"),
  order: operation("POST", "/orders", "/portal/order/:productId"),
  orders: operation("GET", "/orders", "/portal/orders"),
  orderDetail: operation("GET", "/orders/:id", "/portal/orders/:id"),
};

/**
 * A service's add-ons, in words ("Extra IP × 1, monthly, active"). The order's answer carries them
 * (one call for the whole page); it leaves them out for a person who may not read them (no
 * view_services), who sees none rather than a failing page.
 */
function addonWords(options: z.infer<typeof addonList>["options"] | undefined): string {
  return (
    (options ?? [])
      .map(
        (a) =>
          `${a.name} × ${a.quantity}, ${a.billing_cycle.replace("_", "-")}, ${a.status.replaceAll("_", " ")}`,
      )
      .join("; ") || "—"
  );
}

/** Placing an order from the catalogue's form (any page that offers "Order" asks this). */
export const ORDER = pageAction({
  path: "/order/:productId",
  ops: [OPS.order],
  redirect: "/portal/orders/:id",
});

/** The catalogue, the order form (asking before a second identical order), the list and one order. */
export function orderRoutes(kit: Kit, router: Router): void {
  // Orders: the catalogue, the order form, the list and one order.
  page(kit, router, "/order", async (req, res, api) => {
    const products = (await api<z.infer<typeof productList>>(OPS.products)).data.products;
    const body = html`${table(
      "Catalogue",
      ["Product", "Kind", "Description", "From", ""],
      products.map((p) => [
        p.name,
        p.kind,
        p.description,
        p.billing_cycles[0]
          ? `${money(p.billing_cycles[0].price, (p as { currency?: string }).currency)} / ${p.billing_cycles[0].cycle}`
          : "—",
        may(sessionOf(res), ORDER)
          ? html`<a href="/portal/order/${p.id}" aria-label="Order ${p.name}">Order</a>`
          : "",
      ]),
      "Nothing can be ordered right now.",
    )}
${may(sessionOf(res), ORDER) ? html`<p>Several products in one order: <a href="/portal/cart">the cart</a>.</p>` : ""}`;
    kit.render(res, "Order a service", body, await doneOf(kit, req, res));
  });
  async function orderForm(
    req: Request,
    res: Response,
    api: PageApi,
    f: { values: Record<string, string>; errors: Record<string, string>; general?: string },
    status?: number,
    earlier?: EarlierOrder,
  ) {
    const p = (
      await api<z.infer<typeof productDetail>>(OPS.product, { params: { id: String(req.params.productId) } })
    ).data;
    const body = html`${p.description ? html`<p>${p.description}</p>` : ""}
${f.general ? html`<p class="error" role="alert" id="form-error">${f.general}</p>` : ""}
${earlier ? repeatQuestion(earlier) : ""}
<form method="post" action="/portal/order/${p.id}" novalidate>${formTokens(sessionOf(res).csrfToken)}
${earlier ? html`<input type="hidden" name="repeatOf" value="${earlier === "placing" ? earlier : earlier.id}">` : ""}
${orderLineFields(p, f)}
<p class="hint">The order is paid from your credit when it covers the total; otherwise a proforma is issued to pay.</p>
<button type="submit">${earlier ? "Yes, order another" : "Place the order"}</button> <a href="/portal/order">Back to the catalogue</a>
</form>`;
    kit.render(
      res,
      `Order ${p.name}`,
      may(sessionOf(res), ORDER)
        ? body
        : html`<p class="empty" id="not-permitted">Ordering needs the manage permission on this account, and an account that is not suspended.</p>`,
      status ? { status } : {},
    );
  }
  page(kit, router, "/order/:productId", (req, res, api) =>
    orderForm(req, res, api, { values: {}, errors: {} }),
  );
  const orderValues = (req: Request) => ({
    billingCycle: bodyText(req, "billingCycle"),
    hostname: bodyText(req, "hostname"),
    osImage: bodyText(req, "osImage"),
    // A form without the field (an older page) asks for one; an empty or other field is read as typed.
    quantity: req.body?.quantity === undefined ? "1" : bodyText(req, "quantity"),
    ...addonValues(req),
  });
  action(
    kit,
    router,
    ORDER,
    {
      back: (req) => `/portal/order/${String(req.params.productId)}`,
      form: async (req, res, err, api) => {
        if (err instanceof RepeatOrder) {
          await orderForm(req, res, api, { values: orderValues(req), errors: {} }, 409, err.earlier);
          return true;
        }
        // items.0.hostname and the like: the first line's field names are the form's.
        const renamed = {
          ...err,
          details: err.details.map((d) => ({
            ...d,
            field: d.field
              .replace(/^items\.\d+\./, "")
              .replace("configOptions.os_image_id", "osImage")
              .replace(/^addons\..*$/, "addons"),
          })),
        };
        await orderForm(
          req,
          res,
          api,
          fieldErrors(Object.assign(err, renamed), orderValues(req)),
          err.status,
        );
        return true;
      },
    },
    async (req, res, api, token) => {
      const v = orderValues(req);
      // The API's own bound on the lines of an order, read as typed: never rounded or clamped.
      const quantity = orderQuantity.safeParse(v.quantity);
      if (!quantity.success) {
        throw new Refused(400, {
          success: false,
          code: "BAD_REQUEST",
          error: "The order was not placed",
          details: quantity.error.issues.map((i) => ({ field: "quantity", message: i.message })),
        });
      }
      const n = quantity.data;
      const chosen = chosenAddons(v);
      if ("refused" in chosen) {
        throw new Refused(400, {
          success: false,
          code: "BAD_REQUEST",
          error: "The order was not placed",
          details: [{ field: "addons", message: chosen.refused }],
        });
      }
      const item = {
        productId: String(req.params.productId),
        billingCycle: v.billingCycle,
        ...(v.hostname ? { hostname: v.hostname } : {}),
        ...(v.osImage ? { configOptions: { os_image_id: v.osImage } } : {}),
        ...(chosen.addons.length ? { addons: chosen.addons } : {}),
      };
      const repeat = await kit.once.recentOrders.claim(
        sessionOf(res).customerId,
        { ...item, quantity: n },
        bodyText(req, "repeatOf"),
      );
      if (repeat.earlier) throw new RepeatOrder(repeat.earlier);
      let r: z.infer<typeof orderCreation>;
      try {
        r = (
          await api<z.infer<typeof orderCreation>>(OPS.order, {
            // Several of one line: one item each, named web-1, web-2, … (hostnames.ts).
            body:
              n === 1
                ? item
                : {
                    items: numberedHostnames(v.hostname, n).map((h) => ({
                      ...item,
                      ...(h ? { hostname: h } : {}),
                    })),
                  },
            token,
          })
        ).data;
      } catch (err) {
        await repeat.release();
        throw err;
      }
      await repeat.placed({ id: r.order.id, number: r.order.order_number });
      return {
        location: `/portal/orders/${r.order.id}`,
        notice: r.settled
          ? "The order is placed and paid from your credit; the service is being set up."
          : `The order is placed. ${r.next_step}`,
      };
    },
  );
  page(kit, router, "/orders", async (req, res, api) => {
    const r = (
      await api<z.infer<typeof orderList>>(OPS.orders, {
        query: { page: pageParam(req.query.page), limit: PAGE_SIZE.default },
      })
    ).data;
    const body = html`${table(
      "Orders",
      ["Number", "Status", "Payment", "Services", "Total", "Placed"],
      r.orders.map((o) => [
        html`<a href="/portal/orders/${o.id}">${o.order_number}</a>`,
        badge(o.status),
        badge(o.payment_status),
        servicesStanding(o.services_by_status),
        money(o.total, o.currency),
        at(o.created_at),
      ]),
      "No orders yet.",
    )}
${pager("/portal/orders", r.pagination)}
${may(sessionOf(res), ORDER) ? html`<p><a href="/portal/order">Order a new service</a></p>` : ""}`;
    kit.render(res, "Orders", body, await doneOf(kit, req, res));
  });
  page(kit, router, "/orders/:id", async (req, res, api) => {
    const o = (
      await api<z.infer<typeof orderDetail>>(OPS.orderDetail, { params: { id: String(req.params.id) } })
    ).data;
    const cur = o.currency;
    const body = html`${facts([
      ["Status", badge(o.status)],
      ["Payment", badge(o.payment_status)],
      ["Total", money(o.total, cur)],
      ["Placed", at(o.created_at)],
      ["Payment problem", o.payment_error ?? undefined],
    ])}
${allTerminated(o.services.map((x) => x.status)) ? html`<p class="notice" id="all-terminated">Every service of this order is terminated: nothing of it runs or is billed any more.</p>` : ""}
<h2>Services</h2>
${table(
  "Services of the order",
  ["Service", "Status", "Add-ons"],
  o.services.map((s) => [
    html`<a href="/portal/services/${s.id}">${s.hostname || s.name}</a>`,
    badge(s.status),
    addonWords(s.options),
  ]),
  "No services.",
)}
<h2>Documents</h2>
${table(
  "Documents of the order",
  ["Document", "Status", "Total"],
  o.documents.map((d) => [
    html`<a href="/portal/${d.type}s/${d.id}">${d.number}</a>`,
    documentStatus(d),
    money(d.total, d.currency),
  ]),
  "No documents.",
)}`;
    kit.render(res, `Order ${o.order_number}`, body, await doneOf(kit, req, res));
  });
}

/** An identical order came first (repeat-order.ts): the form asks before placing another. */
class RepeatOrder extends Refused {
  readonly earlier: EarlierOrder;
  constructor(earlier: EarlierOrder) {
    super(409, { success: false, code: "CONFLICT", error: "The same order was placed a moment ago" });
    this.earlier = earlier;
  }
}

function repeatQuestion(earlier: EarlierOrder) {
  return earlier === "placing"
    ? html`<section class="warning" role="alert" id="repeat-order"><p><strong>The same order is being placed right now</strong> (from another tab or window). Look at <a href="/portal/orders">your orders</a> first; order another only if you mean to have two.</p></section>`
    : html`<section class="warning" role="alert" id="repeat-order"><p><strong>You ordered the same ${agoInMinutes(earlier.placedAt)}</strong>: <a href="/portal/orders/${earlier.id}">${earlier.number}</a>. Order another?</p>
<p>Nothing is placed until you confirm below; <a href="/portal/orders/${earlier.id}">see ${earlier.number}</a> if one is all you wanted.</p></section>`;
}

const allTerminated = (statuses: string[]) =>
  statuses.length > 0 && statuses.every((x) => x === "terminated");

/** How an order's services stand, in words: "all terminated" when none is left, else the counts. */
function servicesStanding(byStatus: Partial<Record<string, number>>): Html | string {
  const counts = Object.entries(byStatus).filter((e): e is [string, number] => (e[1] ?? 0) > 0);
  if (counts.length === 0) return "none";
  if (allTerminated(counts.map(([k]) => k)))
    return html`<span class="badge badge-terminated">all terminated</span>`;
  return counts.map(([k, n]) => `${n} ${k.replaceAll("_", " ")}`).join(", ");
}
