/**
 * A customer's services in the admin panel, each with its power actions for staff allowed them
 * (compute's DeskRunPowerAction).
 */
import { ProductKind, ProductKindSchema, ServiceStatusSchema } from "@hb/contracts/hb/billing/v1/common_pb";
import { PowerAction, PowerActionSchema } from "@hb/contracts/hb/compute/v1/actions_pb";
import { enumOfWord, enumWord, resolveError } from "@hb/platform";
import type { Request, Response, Router } from "express";
import { allowed } from "./admin-actions.ts";
import { CURRENT, type CustomerShell, pageOf, pager, table, word } from "./admin-customer-view.ts";
import type { AdminDeps } from "./admin-page.ts";
import { day } from "./format.ts";
import { formFields } from "./forms.ts";
import { html } from "./html.ts";
import { sessionOf } from "./session.ts";

export function customerServiceRoutes(router: Router, d: AdminDeps, shell: CustomerShell) {
  const { clients, needs, act } = d;
  const { load, show, done } = shell;

  // Services -----------------------------------------------------------------------------------
  async function servicesTab(req: Request, res: Response, o: { error?: string; code?: number } = {}) {
    const page = pageOf(req.query.services_page);
    const [r, b] = await Promise.all([
      load(req, res),
      clients.billing.deskGetCustomerBilling({ customerId: String(req.params.id), servicesPage: page }),
    ]);
    if (!r) return;
    const c = r.customer!;
    const edit = allowed(res, "service.power");
    const csrf = sessionOf(res).csrfToken;
    const content = html`<h2>Services</h2>
<p>${b.servicesTotal} ${b.servicesTotal === 1 ? "service" : "services"}.</p>
${
  b.services.length === 0
    ? html`<p class="empty">No services.</p>`
    : table(
        "Services",
        ["Name", "Hostname", "Kind", "Status", "Product", "Next due", ...(edit ? ["Power"] : [])],
        b.services.map((s) => {
          const actions = POWER[s.kind] ?? [];
          return html`<tr><td><a href="/admin/customers/${c.id}/services/${s.id}">${s.name}</a></td><td class="mono">${s.hostname || "—"}</td><td>${enumWord(ProductKindSchema, s.kind)}</td>
<td>${word(enumWord(ServiceStatusSchema, s.status))}</td><td>${s.product?.name ?? "—"}</td><td>${day(s.billing?.nextDueDate) || "—"}</td>${
            edit
              ? html`<td>${
                  actions.length
                    ? html`<form method="post" action="/admin/customers/${c.id}/services/${s.id}/power" class="inline">${formFields(csrf)}
<label for="pa-${s.id}" class="sr">Power action for ${s.name}</label><select id="pa-${s.id}" name="action">${actions.map(
                        (a) =>
                          html`<option value="${enumWord(PowerActionSchema, a)}">${enumWord(PowerActionSchema, a)}</option>`,
                      )}</select> <button type="submit">Run<span class="sr"> on ${s.name}</span></button></form>`
                    : "—"
                }</td>`
              : ""
          }</tr>`;
        }),
      )
}
${pager(`/admin/customers/${c.id}/services`, "services_page", page, b.servicesTotal)}`;
    show(res, c, "services", content, { notice: done(req), error: o.error, status: o.code });
  }

  router.get(
    "/customers/:id/services",
    needs("view_clients", CURRENT, (req, res) => servicesTab(req, res)),
  );

  act("service.power", async (req, res, body, audited) => {
    const customerId = String(req.params.id);
    const serviceId = String(req.params.service);
    const name = body.action;
    const action = enumOfWord(PowerActionSchema, name);
    if (!action) return servicesTab(req, res, { error: `"${name}" is not a power action`, code: 400 });
    try {
      const r = await audited(
        res,
        { action: "service.power", customerId, target: serviceId, after: { action: name } },
        () =>
          clients.compute.deskRunPowerAction({
            customerId,
            serviceId,
            action,
          }),
        (r) => ({ after: { action: name, job_id: r.result?.jobId ?? "" } }),
      );
      res.redirect(
        303,
        `/admin/customers/${customerId}/services?done=power&job=${encodeURIComponent(r.result?.jobId ?? "")}`,
      );
    } catch (err) {
      const e = resolveError(err);
      if (e.status >= 500) throw err;
      await servicesTab(req, res, { error: e.message, code: e.status });
    }
  });
}

/** The power actions a machine of each kind takes (compute checks them again). */
const POWER: Record<number, PowerAction[]> = {
  [ProductKind.VPS]: [PowerAction.START, PowerAction.STOP, PowerAction.REBOOT],
  [ProductKind.DEDICATED]: [PowerAction.ON, PowerAction.OFF, PowerAction.RESTART],
  [ProductKind.GAME]: [PowerAction.START, PowerAction.STOP, PowerAction.RESTART],
};
