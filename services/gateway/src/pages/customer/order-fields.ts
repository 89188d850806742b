import type { z } from "zod";
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
${field({ ...f, values: { ...f.values, quantity: f.values.quantity ?? "1" } }, "quantity", "How many", { type: "number", attrs: html` min="1" max="${MAX_ORDER_ITEMS}" step="1"` })}`;
}
