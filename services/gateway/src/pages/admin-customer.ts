/**
 * One customer in the admin panel, as a support desk works it: a page per tab (profile, people,
 * services, invoices and proformas, balance, keys and request log, partner, audit log), each
 * reading what it shows in one round of calls, and every write declared in the action table
 * (admin-actions.ts) and recorded in the audit log first (staff-audit.ts). A control is drawn only
 * for staff the table allows it; a write posted without the permission is refused (403).
 *
 * This module holds the profile tab and wires the others (admin-customer-*.ts).
 */
import { type Customer, CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { resolveError } from "@hb/platform";
import type { Request, Response, Router } from "express";
import { allowed } from "./admin-actions.ts";
import { customerMoneyRoutes } from "./admin-customer-money.ts";
import { customerPeopleRoutes } from "./admin-customer-people.ts";
import { customerRecordRoutes } from "./admin-customer-records.ts";
import { customerServiceRoutes } from "./admin-customer-services.ts";
import { CURRENT, customerShell } from "./admin-customer-view.ts";
import type { AdminDeps } from "./admin-page.ts";
import { servicePageRoutes } from "./admin-service-page.ts";
import { when } from "./format.ts";
import { emptyForm, type FormState, field, formErrors, formFields, generalError } from "./forms.ts";
import { html } from "./html.ts";
import { sessionOf } from "./session.ts";

const facts = (c: Customer) => ({ name: c.name, email: c.email, company: c.company, country: c.country });

export function customerRoutes(router: Router, d: AdminDeps) {
  const { clients, needs, act } = d;
  const shell = customerShell(router, d);
  const { load, show, done, back } = shell;

  // Profile ------------------------------------------------------------------------------------
  async function profileTab(
    req: Request,
    res: Response,
    o: { profile?: FormState; status?: FormState; code?: number } = {},
  ) {
    const r = await load(req, res);
    if (!r) return;
    const c = r.customer!;
    const csrf = sessionOf(res).csrfToken;
    const suspended = c.status === CustomerStatus.SUSPENDED;
    const p = o.profile ?? emptyForm(facts(c));
    const st = o.status ?? emptyForm();
    const content = html`<dl class="facts"><dt>Name</dt><dd>${c.name}</dd><dt>E-mail</dt><dd>${c.email}</dd>
<dt>Company</dt><dd>${c.company || "—"}</dd><dt>Country</dt><dd>${c.country || "—"}</dd><dt>Currency</dt><dd>${c.currency}</dd>
<dt>Status</dt><dd id="customer-status">${suspended ? "Suspended" : "Active"}</dd>${c.statusReason ? html`<dt>Reason</dt><dd>${c.statusReason}</dd>` : ""}
<dt>Created</dt><dd>${when(c.createdAt)}</dd><dt>Id</dt><dd class="mono">${c.id}</dd></dl>
${
  allowed(res, "customer.update")
    ? html`<h2>Edit the profile</h2>
<form method="post" action="/admin/customers/${c.id}/profile" novalidate>
${formFields(csrf)}
${generalError(p)}
${field(p, "name", "Name", { required: true })}
${field(p, "email", "E-mail address", { type: "email", required: true })}
${field(p, "company", "Company")}
${field(p, "country", "Country (two letters)", { hint: "ISO 3166-1, e.g. DE; empty: none" })}
<button type="submit">Save the profile</button>
</form>`
    : ""
}
${
  allowed(res, suspended ? "customer.unsuspend" : "customer.suspend")
    ? html`<h2>${suspended ? "Lift the suspension" : "Suspend the customer"}</h2>
<p>${suspended ? "The account becomes writable again." : "While suspended the account is read-only: the API and the portal refuse every change."}</p>
<form method="post" action="/admin/customers/${c.id}/${suspended ? "unsuspend" : "suspend"}" novalidate>
${formFields(csrf)}
${generalError(st)}
${field(st, "reason", "Reason", { required: true, multiline: true, hint: "Kept with the status and in the audit log." })}
<button type="submit"${suspended ? "" : html` class="danger"`}>${suspended ? "Unsuspend" : "Suspend"} ${c.name}</button>
</form>`
    : ""
}`;
    show(res, c, "", content, { notice: done(req), status: o.code });
  }

  router.get(
    "/customers/:id",
    needs("view_clients", CURRENT, (req, res) => profileTab(req, res)),
  );

  act("customer.update", async (req, res, body, audited) => {
    const r = await load(req, res);
    if (!r) return;
    const c = r.customer!;
    const values = {
      name: body.name,
      email: body.email,
      company: body.company,
      country: body.country,
    };
    try {
      await audited(
        res,
        { action: "customer.update", customerId: c.id, before: facts(c), after: values },
        () => clients.auth.updateCustomer({ customerId: c.id, ...values }),
        (u) => ({ after: facts(u.customer!) }),
      );
      back(res, c.id, "", "profile");
    } catch (err) {
      await profileTab(req, res, { profile: formErrors(err, values), code: resolveError(err).status });
    }
  });

  for (const [action, status] of [
    ["suspend", CustomerStatus.SUSPENDED],
    ["unsuspend", CustomerStatus.ACTIVE],
  ] as const) {
    act(`customer.${action}`, async (req, res, body, audited) => {
      const r = await load(req, res);
      if (!r) return;
      const c = r.customer!;
      const reason = body.reason.trim();
      if (!reason) {
        const f = { values: { reason }, errors: { reason: `Say why the customer is ${action}ed` } };
        return profileTab(req, res, { status: f, code: 400 });
      }
      const statusWord = (s: CustomerStatus) => (s === CustomerStatus.SUSPENDED ? "suspended" : "active");
      try {
        await audited(
          res,
          {
            action: `customer.${action}`,
            customerId: c.id,
            before: { status: statusWord(c.status), reason: c.statusReason },
            after: { status: statusWord(status) },
            reason,
          },
          () => clients.auth.setCustomerStatus({ customerId: c.id, status, reason }),
        );
        back(res, c.id, "", status === CustomerStatus.SUSPENDED ? "suspended" : "unsuspended");
      } catch (err) {
        await profileTab(req, res, { status: formErrors(err, { reason }), code: resolveError(err).status });
      }
    });
  }

  customerPeopleRoutes(router, d, shell);
  customerServiceRoutes(router, d, shell);
  servicePageRoutes(router, d, shell);
  customerMoneyRoutes(router, d, shell);
  customerRecordRoutes(router, d, shell);
}
