import { formatMoney, parseMoney } from "@hb/platform/money";
import { PAGE_SIZE } from "@hb/platform/paging";
import type { Request, Response, Router } from "express";
import type { z } from "zod";
import { orderQuantity } from "../../routes/orders.ts";
import type { account, accountBalance, accountUsage } from "../../wire/account.ts";
import type { invoice } from "../../wire/invoice.ts";
import type { orderCreation, orderDetail, orderList } from "../../wire/order.ts";
import type { productDetail, productList } from "../../wire/product.ts";
import type { transactionList } from "../../wire/transaction.ts";
import { field } from "../forms.ts";
import { html } from "../html.ts";
import { sessionOf } from "../session.ts";
import { operation, type PageApi, Refused } from "./api.ts";
import { action, bodyText, doneOf, fieldErrors, type Kit, page } from "./kit.ts";
import { agoInMinutes, type EarlierOrder } from "./repeat-order.ts";
import { at, badge, buttonForm, facts, formTokens, money, pageParam, pager, table } from "./ui.ts";

type Doc = z.infer<typeof invoice> & { items?: { description: string; amount: string }[] };

const OPS = {
  account: operation("GET", "/account", "/portal/balance"),
  balance: operation("GET", "/account/balance", "/portal/balance"),
  usage: operation("GET", "/account/usage", "/portal/balance"),
  transactions: operation("GET", "/account/transactions", "/portal/balance"),
  invoices: operation("GET", "/invoices", "/portal/invoices"),
  invoice: operation("GET", "/invoices/:id", "/portal/invoices/:id"),
  payInvoice: operation("POST", "/invoices/:id/pay", "/portal/invoices/:id"),
  proformas: operation("GET", "/proformas", "/portal/proformas"),
  proforma: operation("GET", "/proformas/:id", "/portal/proformas/:id"),
  payProforma: operation("POST", "/proformas/:id/pay", "/portal/proformas/:id"),
  products: operation("GET", "/products", "/portal/order"),
  product: operation("GET", "/products/:id", "/portal/order/:productId"),
  order: operation("POST", "/orders", "/portal/order/:productId"),
  orders: operation("GET", "/orders", "/portal/orders"),
  orderDetail: operation("GET", "/orders/:id", "/portal/orders/:id"),
};

const DOC_STATES = ["unpaid", "paid", "cancelled"];
const kinds = {
  invoices: {
    list: OPS.invoices,
    one: OPS.invoice,
    pay: OPS.payInvoice,
    title: "Invoices",
    single: "Invoice",
  },
  proformas: {
    list: OPS.proformas,
    one: OPS.proforma,
    pay: OPS.payProforma,
    title: "Proformas",
    single: "Proforma",
  },
} as const;

export function billingRoutes(kit: Kit, router: Router): void {
  page(kit, router, "/balance", async (req, res, api) => {
    const [acct, bal, usage, tx] = await Promise.all([
      api<z.infer<typeof account>>(OPS.account),
      api<z.infer<typeof accountBalance>>(OPS.balance),
      api<z.infer<typeof accountUsage>>(OPS.usage),
      api<z.infer<typeof transactionList>>(OPS.transactions, {
        query: { page: pageParam(req.query.page), limit: PAGE_SIZE.default },
      }),
    ]);
    const cur = bal.data.currency;
    const body = html`${facts([
      ["Account", `${acct.data.name}${acct.data.company ? ` (${acct.data.company})` : ""}`],
      ["Credit balance", html`<strong>${money(bal.data.balance, cur)}</strong>`],
      ["Recurring per month", money(usage.data.recurring_monthly_amount, cur)],
      [
        "Unpaid invoices",
        `${usage.data.unpaid_invoices.count} (${money(usage.data.unpaid_invoices.total, cur)})`,
      ],
      ["Paid this month", money(usage.data.paid_this_month, cur)],
      ["Hourly charges this month", money(usage.data.hourly_charges_this_month, cur)],
    ])}
<p><a href="/portal/add-credit">Add credit</a> by card or bank transfer.</p>
<h2>Transactions</h2>
${table(
  "Transactions",
  ["When", "Type", "Amount", "Balance after", "Description"],
  tx.data.transactions.map((t) => [
    at(t.created_at),
    t.type.replaceAll("_", " "),
    money(t.amount, cur),
    money(t.balance_after, cur),
    t.document_id ? html`<a href="/portal/invoices/${t.document_id}">${t.description}</a>` : t.description,
  ]),
  "No transactions yet.",
)}
${pager("/portal/balance", tx.data.pagination)}`;
    kit.render(res, "Balance and transactions", body, await doneOf(kit, req, res));
  });

  for (const [plural, k] of Object.entries(kinds)) {
    page(kit, router, `/${plural}`, async (req, res, api) => {
      const status =
        typeof req.query.status === "string" && DOC_STATES.includes(req.query.status) ? req.query.status : "";
      const r = await api<Record<string, unknown>>(k.list, {
        query: { page: pageParam(req.query.page), limit: PAGE_SIZE.default, status },
      });
      const docs = (r.data[plural] ?? []) as Doc[];
      const body = html`<form method="get" action="/portal/${plural}" class="filters">
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status"><option value="">Any status</option>${DOC_STATES.map((s) => html`<option value="${s}"${s === status ? html` selected` : ""}>${s}</option>`)}</select></div>
<button type="submit">Filter</button></form>
${table(
  k.title,
  ["Number", "Status", "Total", "Due", "Purpose", "Created"],
  docs.map((d) => [
    html`<a href="/portal/${plural}/${d.id}">${d.number}</a>`,
    badge(d.status),
    money(d.total, d.currency),
    money(d.amount_due, d.currency),
    d.purpose,
    at(d.created_at).slice(0, 10),
  ]),
  status ? `No ${plural} with this status.` : `No ${plural} yet.`,
)}
${pager(`/portal/${plural}`, r.data.pagination as { page: number; limit: number; total: number }, status ? { status } : {})}`;
      kit.render(res, k.title, body, await doneOf(kit, req, res));
    });
    page(kit, router, `/${plural}/:id`, async (req, res, api) => {
      const d = (await api<Doc>(k.one, { params: { id: String(req.params.id) } })).data;
      const body = html`${facts([
        ["Status", badge(d.status)],
        ["Total", money(d.total, d.currency)],
        ["Paid", money(d.amount_paid, d.currency)],
        ["Due", money(d.amount_due, d.currency)],
        ["Purpose", d.purpose],
        ["Created", at(d.created_at)],
        ["Due date", at(d.due_date)],
        ["Paid at", at(d.paid_at)],
        ["Order", d.order_id ? html`<a href="/portal/orders/${d.order_id}">${d.order_id}</a>` : undefined],
        [
          "Service",
          d.service_id ? html`<a href="/portal/services/${d.service_id}">${d.service_id}</a>` : undefined,
        ],
        [
          "Became invoice",
          d.converted_invoice_id
            ? html`<a href="/portal/invoices/${d.converted_invoice_id}">${d.converted_invoice_id}</a>`
            : undefined,
        ],
      ])}
${
  d.items?.length
    ? table(
        "Lines",
        ["Description", "Amount"],
        d.items.map((i) => [i.description, money(i.amount, d.currency)]),
        "",
      )
    : ""
}
${d.status === "unpaid" ? payFromCredit(`/portal/${plural}/${d.id}/pay`, d, await balanceOf(api), sessionOf(res).csrfToken) : ""}
<p><a href="/portal/${plural}">All ${plural}</a></p>`;
      kit.render(res, `${k.single} ${d.number}`, body, await doneOf(kit, req, res));
    });
    action(
      kit,
      router,
      `/${plural}/:id/pay`,
      { back: (req) => `/portal/${plural}/${String(req.params.id)}` },
      async (req, res, api, token) => {
        // An amount pays part (the API's rule: up to what is due and what the balance holds); no
        // amount pays what is due.
        const amount = bodyText(req, "amount").trim();
        const r = await api<{ creditApplied: number; remainingAmount: number; newBalance: number }>(k.pay, {
          params: { id: String(req.params.id) },
          body: amount ? { amount } : {},
          token,
        });
        const cur = sessionOf(res).currency;
        return {
          location: `/portal/${plural}/${String(req.params.id)}`,
          notice:
            r.data.remainingAmount > 0
              ? `${money(r.data.creditApplied, cur)} paid from credit; ${money(r.data.remainingAmount, cur)} is still due. Your balance is now ${money(r.data.newBalance, cur)}.`
              : `Paid from credit; your balance is now ${money(r.data.newBalance, cur)}.`,
        };
      },
    );
  }

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
        html`<a href="/portal/order/${p.id}" aria-label="Order ${p.name}">Order</a>`,
      ]),
      "Nothing can be ordered right now.",
    )}`;
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
    const cur = (p as { currency?: string }).currency;
    const cycle = f.values.billingCycle || p.billing_cycles[0]?.cycle || "";
    const body = html`${p.description ? html`<p>${p.description}</p>` : ""}
${f.general ? html`<p class="error" role="alert" id="form-error">${f.general}</p>` : ""}
${earlier ? repeatQuestion(earlier) : ""}
<form method="post" action="/portal/order/${p.id}" novalidate>${formTokens(sessionOf(res).csrfToken)}
${earlier ? html`<input type="hidden" name="repeatOf" value="${earlier === "placing" ? earlier : earlier.id}">` : ""}
<fieldset class="field${f.errors.billingCycle ? " invalid" : ""}"><legend>Billing cycle</legend>
${p.billing_cycles.map((c, n) => html`<div><input type="radio" id="cycle-${n}" name="billingCycle" value="${c.cycle}"${c.cycle === cycle ? html` checked` : ""}> <label for="cycle-${n}">${c.cycle}: ${money(c.price, cur)}</label></div>`)}
${f.errors.billingCycle ? html`<p class="error" id="f-billingCycle-error">${f.errors.billingCycle}</p>` : ""}
</fieldset>
${field(f, "hostname", "Hostname", { hint: "Optional: a name such as web1.example.com." })}
${
  p.os_images.length
    ? html`<div class="field${f.errors.osImage ? " invalid" : ""}"><label for="f-osImage">Operating system</label><select id="f-osImage" name="osImage">${p.os_images.map((i) => html`<option value="${i.id}"${i.id === f.values.osImage ? html` selected` : ""}>${i.name}</option>`)}</select>${f.errors.osImage ? html`<p class="error" id="f-osImage-error">${f.errors.osImage}</p>` : ""}</div>`
    : ""
}
${field({ ...f, values: { ...f.values, quantity: f.values.quantity ?? "1" } }, "quantity", "How many", { type: "number", attrs: html` min="1" max="50" step="1"` })}
<p class="hint">The order is paid from your credit when it covers the total; otherwise a proforma is issued to pay.</p>
<button type="submit">${earlier ? "Yes, order another" : "Place the order"}</button> <a href="/portal/order">Back to the catalogue</a>
</form>`;
    kit.render(res, `Order ${p.name}`, body, status ? { status } : {});
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
  });
  action(
    kit,
    router,
    "/order/:productId",
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
            field: d.field.replace(/^items\.\d+\./, "").replace("configOptions.os_image_id", "osImage"),
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
      const item = {
        productId: String(req.params.productId),
        billingCycle: v.billingCycle,
        ...(v.hostname ? { hostname: v.hostname } : {}),
        ...(v.osImage ? { configOptions: { os_image_id: v.osImage } } : {}),
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
            body: n === 1 ? item : { items: Array.from({ length: n }, () => item) },
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
      ["Number", "Status", "Payment", "Total", "Placed"],
      r.orders.map((o) => [
        html`<a href="/portal/orders/${o.id}">${o.order_number}</a>`,
        badge(o.status),
        badge(o.payment_status),
        money(o.total, o.currency),
        at(o.created_at),
      ]),
      "No orders yet.",
    )}
${pager("/portal/orders", r.pagination)}
<p><a href="/portal/order">Order a new service</a></p>`;
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
<h2>Services</h2>
${table(
  "Services of the order",
  ["Service", "Status"],
  o.services.map((s) => [
    html`<a href="/portal/services/${s.id}">${s.hostname || s.name}</a>`,
    badge(s.status),
  ]),
  "No services.",
)}
<h2>Documents</h2>
${table(
  "Documents of the order",
  ["Document", "Status", "Total"],
  o.documents.map((d) => [
    html`<a href="/portal/${d.type}s/${d.id}">${d.number}</a>`,
    badge(d.status),
    money(d.total, d.currency),
  ]),
  "No documents.",
)}`;
    kit.render(res, `Order ${o.order_number}`, body, await doneOf(kit, req, res));
  });
}

/** The credit balance, when the person may read it (a member without view_billing pays blind). */
async function balanceOf(api: PageApi): Promise<{ balance: string; currency: string } | undefined> {
  try {
    const b = (await api<z.infer<typeof accountBalance>>(OPS.balance)).data;
    return { balance: String(b.balance), currency: b.currency };
  } catch (err) {
    if (err instanceof Refused) return undefined;
    throw err;
  }
}

/**
 * How an unpaid document is paid from credit. A balance that covers what is due pays it in one
 * click. A short one says what is missing, links to Add credit with that amount, and offers to pay
 * part now, as the API allows (POST …/pay with an amount).
 */
function payFromCredit(
  action: string,
  d: Doc,
  bal: { balance: string; currency: string } | undefined,
  csrf: string,
) {
  const due = parseMoney(String(d.amount_due)) ?? 0n;
  const balance = bal ? parseMoney(bal.balance) : undefined;
  const full = html`${buttonForm(action, "Pay from credit", csrf)}`;
  if (balance !== undefined && balance >= due) {
    return html`<h2>Pay</h2><p>Pays ${money(d.amount_due, d.currency)} from your credit balance of ${money(bal?.balance, d.currency)}.</p>${full}`;
  }
  const partForm = (
    value: string,
  ) => html`<form method="post" action="${action}" novalidate>${formTokens(csrf)}
<div class="field"><label for="f-amount">Amount to pay now (${d.currency})</label>
<p class="hint" id="f-amount-hint">Up to ${money(d.amount_due, d.currency)}; the rest stays due on this document.</p>
<input id="f-amount" name="amount" inputmode="decimal" aria-describedby="f-amount-hint" value="${value}"></div>
<button type="submit">Pay part from credit</button></form>`;
  if (balance === undefined) {
    return html`<h2>Pay</h2><p>Pays ${money(d.amount_due, d.currency)} from your credit balance.</p>${full}
<h3>Pay part</h3>${partForm("")}`;
  }
  const missing = formatMoney(due - balance);
  return html`<h2>Pay</h2>
<p>Your credit balance is ${money(bal?.balance, d.currency)}: <strong>${money(missing, d.currency)} short</strong> of the ${money(d.amount_due, d.currency)} due.</p>
<p><a href="/portal/add-credit?amount=${money(missing)}" id="add-missing-credit">Add ${money(missing, d.currency)} of credit</a>, then pay in full${balance > 0n ? ", or pay part now:" : "."}</p>
${balance > 0n ? partForm(money(formatMoney(balance))) : ""}`;
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
