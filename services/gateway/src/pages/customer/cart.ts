import { formatMoney, parseMoney } from "@hb/platform/money";
import type { Request, Response, Router } from "express";
import type { z } from "zod";
import { MAX_ORDER_ITEMS, orderItem, orderQuantity } from "../../routes/orders.ts";
import type { orderCreation } from "../../wire/order.ts";
import type { productDetail, productList } from "../../wire/product.ts";
import type { FormState } from "../forms.ts";
import { html } from "../html.ts";
import { sessionOf } from "../session.ts";
import { operation, type PageApi, Refused } from "./api.ts";
import type { CartLine } from "./cart-store.ts";
import { numberedHostnames } from "./hostnames.ts";
import { action, doneOf, fieldErrors, type Kit, page } from "./kit.ts";
import { addonValues, chosenAddons, orderLineFields } from "./order-fields.ts";
import { may, pageAction } from "./page-table.ts";
import { buttonForm, formTokens, money, table } from "./ui.ts";

type Product = z.infer<typeof productDetail>;

/**
 * The cart: a multi-product order built over several forms, placed as one POST /orders with
 * `items` (the API's own operation, with its cool-down, idempotency and rules). A line is checked
 * with the API's own item schema and quantity rule before it is kept, so the cart never holds what
 * the order would refuse for its shape; the catalogue's names and prices are read when it is shown.
 */
const OPS = {
  products: operation("GET", "/products", "/portal/cart"),
  product: operation("GET", "/products/:id", "/portal/cart/add/:productId"),
  order: operation("POST", "/orders", "/portal/cart"),
};

/**
 * The cart's page actions. Adding and removing a line keep it in the portal's cart (no API
 * operation: the API has no cart); they need what placing the order needs, so a person who may
 * not order is not offered a cart. Placing performs POST /orders.
 */
const CART_NEED = {
  permissions: ["manage_services"] as const,
  write: true,
  why: "a line kept in the portal's cart, which the API has not; the order itself is POST /orders (Place the order)",
};
const ADD = pageAction({ path: "/cart/add/:productId", ops: [], own: CART_NEED, redirect: "/portal/cart" });
const REMOVE = pageAction({ path: "/cart/remove/:n", ops: [], own: CART_NEED, redirect: "/portal/cart" });
const PLACE = pageAction({ path: "/cart/order", ops: [OPS.order], redirect: "/portal/orders/:id" });

const who = (res: Response) => {
  const s = sessionOf(res);
  return [s.customerId, s.subjectId] as const;
};

const refusedOn = (field: string, message: string) =>
  new Refused(400, {
    success: false,
    code: "BAD_REQUEST",
    error: "The line was not added",
    details: [{ field, message }],
  });

/** The catalogue's record of each product in the cart; a product no longer offered is absent. */
async function productsOf(api: PageApi, lines: CartLine[]): Promise<Map<string, Product>> {
  const ids = [...new Set(lines.map((l) => l.productId))];
  const found = await Promise.all(
    ids.map((id) =>
      api<Product>(OPS.product, { params: { id } }).then(
        (r) => r.data,
        (err: unknown) => {
          if (err instanceof Refused && err.status === 404) return undefined;
          throw err;
        },
      ),
    ),
  );
  return new Map(found.filter((p): p is Product => p !== undefined).map((p) => [p.id, p]));
}

/** An add-on's catalogue price as the order charges it: a month, or once (undefined when not offered). */
const addonPrice = (p: Product | undefined, a: NonNullable<CartLine["addons"]>[number]) => {
  const o = p?.options.find((x) => x.id === a.optionId);
  // The catalogue shows prices as JSON numbers of at most 4 decimals: toFixed(4) reads them exactly.
  const price = a.billingType === "recurring" ? o?.recurring_monthly : o?.one_time;
  return price === null || price === undefined ? undefined : parseMoney(price.toFixed(4));
};

/** A line's price for its whole quantity, add-ons included, in the product's currency ("" when not offered). */
function lineTotal(p: Product | undefined, l: CartLine): { units?: bigint; currency?: string } {
  const price = p?.billing_cycles.find((c) => c.cycle === l.billingCycle)?.price;
  const prices = [
    price === undefined ? undefined : parseMoney(price),
    ...(l.addons ?? []).map((a) => addonPrice(p, a)),
  ];
  if (prices.some((u) => u === undefined)) return {};
  const units = prices.reduce<bigint>((sum, u) => sum + (u ?? 0n), 0n);
  return { units: units * BigInt(l.quantity), currency: p?.currency };
}

/** The line's add-ons by name, as the catalogue calls them. */
const addonNames = (p: Product | undefined, l: CartLine) =>
  (l.addons ?? [])
    .map((a) => {
      const name = p?.options.find((o) => o.id === a.optionId)?.name ?? "No longer offered";
      return a.billingType === "recurring" ? `${name} (monthly)` : `${name} (once)`;
    })
    .join(", ") || "—";

/** The cart's lines as the API's order items, one per service (reseller orders take the same). */
export const orderItemsOf = (lines: CartLine[]) =>
  lines.flatMap((l) =>
    numberedHostnames(l.hostname ?? "", l.quantity).map((hostname) => ({
      productId: l.productId,
      billingCycle: l.billingCycle,
      ...(hostname ? { hostname } : {}),
      ...(l.osImage ? { configOptions: { os_image_id: l.osImage } } : {}),
      ...(l.addons?.length ? { addons: l.addons } : {}),
    })),
  );

export function cartRoutes(kit: Kit, router: Router): void {
  const carts = kit.once.carts;

  page(kit, router, "/cart", async (req, res, api) => {
    const lines = await carts.lines(...who(res));
    const [products, catalogue] = await Promise.all([
      productsOf(api, lines),
      api<z.infer<typeof productList>>(OPS.products),
    ]);
    const totals = new Map<string, bigint>();
    const rows = lines.map((l, n) => {
      const p = products.get(l.productId);
      const t = lineTotal(p, l);
      if (t.units !== undefined && t.currency)
        totals.set(t.currency, (totals.get(t.currency) ?? 0n) + t.units);
      return [
        p?.name ?? html`<span class="error">No longer offered</span>`,
        l.billingCycle,
        String(l.quantity),
        l.hostname ?? "—",
        l.osImage ?? "—",
        addonNames(p, l),
        t.units === undefined ? "—" : money(formatMoney(t.units), t.currency),
        may(sessionOf(res), REMOVE)
          ? buttonForm(`/portal/cart/remove/${n}`, "Remove", sessionOf(res).csrfToken, {
              aria: `Remove ${p?.name ?? "line"} ${n + 1}`,
            })
          : "",
      ];
    });
    const count = lines.reduce((sum, l) => sum + l.quantity, 0);
    const body = html`${table(
      "Cart",
      ["Product", "Billing cycle", "How many", "Hostname", "Operating system", "Add-ons", "Price", ""],
      rows,
      "Your cart is empty: add products below, then place them as one order.",
    )}
${
  lines.length && may(sessionOf(res), PLACE)
    ? html`<p>Total for the first term: <strong id="cart-total">${[...totals].map(([c, u]) => money(formatMoney(u), c)).join(" + ") || "—"}</strong> (${count} ${count === 1 ? "service" : "services"}; at most ${MAX_ORDER_ITEMS} per order).</p>
<p class="hint">The order is paid from your credit when it covers the total; otherwise a proforma is issued to pay.</p>
<form method="post" action="/portal/cart/order">${formTokens(sessionOf(res).csrfToken)}<button type="submit">Place the order</button></form>`
    : ""
}
<h2>Add a product</h2>
${table(
  "Catalogue",
  ["Product", "Kind", "From", ""],
  catalogue.data.products.map((p) => [
    p.name,
    p.kind,
    p.billing_cycles[0]
      ? `${money(p.billing_cycles[0].price, p.currency)} / ${p.billing_cycles[0].cycle}`
      : "—",
    may(sessionOf(res), ADD)
      ? html`<a href="/portal/cart/add/${p.id}" aria-label="Add ${p.name} to the cart">Add to cart</a>`
      : "",
  ]),
  "Nothing can be ordered right now.",
)}`;
    kit.render(res, "Cart", body, await doneOf(kit, req, res));
  });

  async function addForm(req: Request, res: Response, api: PageApi, f: FormState, status?: number) {
    const p = (await api<Product>(OPS.product, { params: { id: String(req.params.productId) } })).data;
    const body = html`${p.description ? html`<p>${p.description}</p>` : ""}
${f.general ? html`<p class="error" role="alert">${f.general}</p>` : ""}
<form method="post" action="/portal/cart/add/${p.id}" novalidate>${formTokens(sessionOf(res).csrfToken)}
${orderLineFields(p, f)}
<button type="submit">Add to cart</button> <a href="/portal/cart">Back to the cart</a>
</form>`;
    kit.render(res, `Add ${p.name} to the cart`, body, status ? { status } : {});
  }

  page(kit, router, "/cart/add/:productId", (req, res, api) =>
    addForm(req, res, api, { values: {}, errors: {} }),
  );

  const lineValues = (req: Request): Record<string, string> => {
    const text = (name: string) => (typeof req.body?.[name] === "string" ? (req.body[name] as string) : "");
    return {
      billingCycle: text("billingCycle"),
      hostname: text("hostname"),
      osImage: text("osImage"),
      quantity: req.body?.quantity === undefined ? "1" : text("quantity"),
      ...addonValues(req),
    };
  };

  action(
    kit,
    router,
    ADD,
    {
      back: (req) => `/portal/cart/add/${String(req.params.productId)}`,
      form: async (req, res, err, api) => {
        await addForm(req, res, api, fieldErrors(err, lineValues(req)), err.status);
        return true;
      },
    },
    async (req, res, api) => {
      const v = lineValues(req);
      const productId = String(req.params.productId);
      // The API's own item schema and quantity rule: the cart keeps only what an order accepts.
      const item = orderItem.safeParse({
        productId,
        billingCycle: v.billingCycle,
        ...(v.hostname ? { hostname: v.hostname } : {}),
        ...(v.osImage ? { configOptions: { os_image_id: v.osImage } } : {}),
      });
      if (!item.success) {
        const issue = item.error.issues[0];
        const name = issue.path[0] === "configOptions" ? "osImage" : String(issue.path[0] ?? "");
        throw refusedOn(name, issue.message);
      }
      const quantity = orderQuantity.safeParse(v.quantity);
      if (!quantity.success) throw refusedOn("quantity", quantity.error.issues[0].message);
      // The numbered names (web-1 … web-12) are what the order sends: the longest must pass too.
      const longest = numberedHostnames(v.hostname, quantity.data).at(-1) ?? "";
      const numbered = orderItem.shape.hostname.safeParse(longest || undefined);
      if (!numbered.success) throw refusedOn("hostname", `${longest}: ${numbered.error.issues[0].message}`);
      const p = (await api<Product>(OPS.product, { params: { id: productId } })).data;
      if (!p.billing_cycles.some((c) => c.cycle === v.billingCycle))
        throw refusedOn("billingCycle", `${p.name} is not offered ${v.billingCycle || "without a cycle"}`);
      if (v.osImage && !p.os_images.some((i) => i.id === v.osImage))
        throw refusedOn("osImage", `${p.name} offers no such operating system`);
      // The API's own add-on schema, then the catalogue: the cart keeps only add-ons it offers so.
      const chosen = chosenAddons(v);
      if ("refused" in chosen) throw refusedOn("addons", chosen.refused);
      const addons = chosen.addons.map(({ optionId, billingType }) => ({ optionId, billingType }));
      if (addons.some((a) => addonPrice(p, a) === undefined))
        throw refusedOn("addons", `${p.name} offers no such add-on`);
      const held = (await carts.lines(...who(res))).reduce((sum, l) => sum + l.quantity, 0);
      if (held + quantity.data > MAX_ORDER_ITEMS)
        throw refusedOn(
          "quantity",
          `an order holds at most ${MAX_ORDER_ITEMS} services; the cart has ${held}, so at most ${MAX_ORDER_ITEMS - held} more`,
        );
      await carts.add(...who(res), {
        productId,
        billingCycle: v.billingCycle,
        ...(v.hostname ? { hostname: v.hostname } : {}),
        ...(v.osImage ? { osImage: v.osImage } : {}),
        quantity: quantity.data,
        ...(addons.length ? { addons } : {}),
      });
      return { location: "/portal/cart", notice: `${p.name} × ${quantity.data} is in your cart.` };
    },
  );

  action(kit, router, REMOVE, { back: () => "/portal/cart" }, async (req, res) => {
    await carts.remove(...who(res), Number.parseInt(String(req.params.n), 10));
    return { location: "/portal/cart", notice: "The line is removed from your cart." };
  });

  action(kit, router, PLACE, { back: () => "/portal/cart" }, async (_req, res, api, token) => {
    const lines = await carts.lines(...who(res));
    if (!lines.length) return { location: "/portal/cart", error: "Your cart is empty; nothing was ordered." };
    const r = (
      await api<z.infer<typeof orderCreation>>(OPS.order, { body: { items: orderItemsOf(lines) }, token })
    ).data;
    await carts.clear(...who(res));
    return {
      location: `/portal/orders/${r.order.id}`,
      notice: r.settled
        ? "The order is placed and paid from your credit; the services are being set up."
        : `The order is placed. ${r.next_step}`,
    };
  });
}
