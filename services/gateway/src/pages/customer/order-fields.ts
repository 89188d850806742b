import type { Request } from "express";
import type { z } from "zod";
import { addonChoice } from "../../routes/addon-choice.ts";
import { MAX_ORDER_ITEMS } from "../../routes/orders.ts";
import type { productDetail } from "../../wire/product.ts";
import { type FormState, field } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { money } from "./ui.ts";

/**
 * The fields of one order line (billing cycle, hostname, operating system, how many), shared by
 * the order form and the cart's add form, so both ask an order item the same way.
 */
export function orderLineFields(p: z.infer<typeof productDetail>, f: FormState): Html {
  const cycle = f.values.billingCycle || p.billing_cycles[0]?.cycle || "";
  return html`<fieldset class="field${f.errors.billingCycle ? " invalid" : ""}"><legend>Billing cycle</legend>
${p.billing_cycles.map((c, n) => html`<div><input type="radio" id="cycle-${n}" name="billingCycle" value="${c.cycle}"${c.cycle === cycle ? html` checked` : ""}> <label for="cycle-${n}">${c.cycle}: ${money(c.price, p.currency)}</label></div>`)}
${f.errors.billingCycle ? html`<p class="error" id="f-billingCycle-error">${f.errors.billingCycle}</p>` : ""}
</fieldset>
${field(f, "hostname", "Hostname", { hint: "Optional: a name such as web.example.com. Several are numbered: web-1.example.com, web-2.example.com, …" })}
${
  p.os_images.length
    ? html`<div class="field${f.errors.osImage ? " invalid" : ""}"><label for="f-osImage">Operating system</label><select id="f-osImage" name="osImage">${p.os_images.map((i) => html`<option value="${i.id}"${i.id === f.values.osImage ? html` selected` : ""}>${i.name}</option>`)}</select>${f.errors.osImage ? html`<p class="error" id="f-osImage-error">${f.errors.osImage}</p>` : ""}</div>`
    : ""
}
${addonFields(p, f)}
${field({ ...f, values: { ...f.values, quantity: f.values.quantity ?? "1" } }, "quantity", "How many", { type: "number", attrs: html` min="1" max="${MAX_ORDER_ITEMS}" step="1"` })}`;
}

/** A form field naming the add-on it chooses: addon-<option id>, valued recurring or one_time. */
const ADDON_FIELD = /^addon-(.+)$/;

/**
 * The product's add-ons with their prices (GET /products/{id}'s options), each chosen or not. A
 * recurring one is bought by the month (the API's default cycle), so the price shown is the one
 * charged; it starts, with its own month, when the order is paid.
 */
function addonFields(p: z.infer<typeof productDetail>, f: FormState): Html {
  if (!p.options.length) return html``;
  const choice = (value: string, label: string, chosen: string) =>
    html`<option value="${value}"${value === chosen ? html` selected` : ""}>${label}</option>`;
  return html`<fieldset class="field${f.errors.addons ? " invalid" : ""}" id="f-addons"><legend>Add-ons</legend>
${p.options.map((o) => {
  const chosen = f.values[`addon-${o.id}`] ?? "";
  return html`<div><label for="f-addon-${o.id}">${o.name}</label> <select id="f-addon-${o.id}" name="addon-${o.id}">${choice("", "Not now", chosen)}${o.recurring_monthly === null ? "" : choice("recurring", `${money(o.recurring_monthly, p.currency)} / month`, chosen)}${o.one_time === null ? "" : choice("one_time", `${money(o.one_time, p.currency)} once`, chosen)}</select></div>`;
})}
${f.errors.addons ? html`<p class="error" id="f-addons-error">${f.errors.addons}</p>` : ""}
</fieldset>`;
}

/** The add-on fields a form sent, as typed (to show the form again). */
export const addonValues = (req: Request): Record<string, string> =>
  Object.fromEntries(
    Object.entries((req.body ?? {}) as Record<string, unknown>).filter(
      (e): e is [string, string] => ADDON_FIELD.test(e[0]) && typeof e[1] === "string" && e[1] !== "",
    ),
  );

/**
 * The add-ons a form chose, each checked by the API's own add-on schema (so a page never sends
 * what the API refuses for its shape); the first refused one's message, when one is.
 */
export function chosenAddons(
  values: Record<string, string>,
): { addons: z.infer<typeof addonChoice>[] } | { refused: string } {
  const addons: z.infer<typeof addonChoice>[] = [];
  for (const [name, billingType] of Object.entries(values)) {
    const optionId = ADDON_FIELD.exec(name)?.[1];
    if (!optionId) continue;
    const a = addonChoice.safeParse({ optionId, billingType });
    if (!a.success) return { refused: a.error.issues[0].message };
    addons.push(a.data);
  }
  return { addons };
}
