/**
 * One customer in the admin panel, as a support desk works it: a page per tab (profile, people,
 * services, invoices and proformas, balance, keys and request log, partner, audit log), each
 * reading what it shows in one round of calls, and every write recorded in the audit log first
 * (staff-audit.ts). Write controls appear only for staff with edit clients; a write posted
 * without it is refused by `needs` (403).
 */
import { type Customer, CustomerStatus, type Person } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { type ApiKey, ApiKeyStatus, ApiKeyStatusSchema } from "@hb/contracts/hb/auth/v1/api_keys_pb";
import { PartnerStatusSchema } from "@hb/contracts/hb/auth/v1/partners_pb";
import { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { type StaffAction, StaffActionOutcome } from "@hb/contracts/hb/auth/v1/staff_audit_pb";
import { ProductKind, ProductKindSchema, ServiceStatusSchema } from "@hb/contracts/hb/billing/v1/common_pb";
import { type Document, DocumentStatusSchema } from "@hb/contracts/hb/billing/v1/documents_pb";
import { TransactionKindSchema } from "@hb/contracts/hb/billing/v1/ledger_pb";
import { PowerAction, PowerActionSchema } from "@hb/contracts/hb/compute/v1/actions_pb";
import type { Money } from "@hb/contracts/hb/platform/v1/money_pb";
import {
  ALL_PERMISSIONS,
  enumOfWord,
  enumWord,
  isUuid,
  PERMISSIONS,
  type Permission,
  resolveError,
} from "@hb/platform";
import { readMoney } from "@hb/platform/money";
import type { Request, Response, Router } from "express";
import type { PageClients } from "../clients.ts";
import type { AdminNeeds, AdminRender, StaffPermission } from "./admin-page.ts";
import { money } from "./customer/ui.ts";
import { day, when } from "./format.ts";
import {
  checkedPermissions,
  emptyForm,
  type FormState,
  field,
  formErrors,
  formFields,
  generalError,
  personFormValues,
} from "./forms.ts";
import { type Html, html } from "./html.ts";
import { logFilterOf, requestLogView } from "./request-log.ts";
import { sessionOf } from "./session.ts";
import { type Audited, OutcomeUnknown, settleMoneyWrite } from "./staff-audit.ts";

export interface CustomerPageDeps {
  clients: PageClients;
  render: AdminRender;
  needs: AdminNeeds;
  can: (res: Response, p: StaffPermission) => boolean;
  audited: Audited;
  linkFor: (realm: Realm, id: string) => Promise<string>;
  linkPanel: (name: string, url: string) => Html;
}

const CURRENT = "/admin/customers";
const PAGE = 20;

const TABS = [
  ["", "Profile"],
  ["people", "People"],
  ["services", "Services"],
  ["documents", "Invoices and proformas"],
  ["balance", "Balance"],
  ["keys", "Keys and request log"],
  ["partner", "Partner"],
  ["audit", "Audit log"],
] as const;
type Tab = (typeof TABS)[number][0];

/** Notices after a write, by the `done` word of the redirect (POST-redirect-GET). */
const DONE: Record<string, string> = {
  created: "The customer is created.",
  profile: "The profile is saved.",
  suspended: "The customer is suspended.",
  unsuspended: "The suspension is lifted.",
  permissions: "The permissions are saved.",
  credit: "The balance is adjusted.",
  power: "The power action is accepted; its job runs on.",
  revoked: "The key is revoked.",
};

/** The power actions a machine of each kind takes (compute checks them again). */
const POWER: Record<number, PowerAction[]> = {
  [ProductKind.VPS]: [PowerAction.START, PowerAction.STOP, PowerAction.REBOOT],
  [ProductKind.DEDICATED]: [PowerAction.ON, PowerAction.OFF, PowerAction.RESTART],
  [ProductKind.GAME]: [PowerAction.START, PowerAction.STOP, PowerAction.RESTART],
};

const amount = (m: Money | undefined) => (m ? money(m.amount, m.currency) : "—");
const word = (s: string) => (s ? s.replaceAll("_", " ") : "—");
const pageOf = (v: unknown) => Math.max(1, Math.min(100_000, Number.parseInt(String(v ?? "1"), 10) || 1));
const facts = (c: Customer) => ({ name: c.name, email: c.email, company: c.company, country: c.country });

function pager(base: string, param: string, page: number, total: number, keep: Record<string, string> = {}) {
  const pages = Math.max(1, Math.ceil(total / PAGE));
  if (pages <= 1) return "";
  const link = (n: number) => `${base}?${new URLSearchParams({ ...keep, [param]: String(n) })}`;
  return html`<nav class="pager" aria-label="Pages of ${param.replace("_page", "")}">${page > 1 ? html`<a href="${link(page - 1)}" rel="prev">Previous page</a>` : ""}<span>Page ${Math.min(page, pages)} of ${pages}</span>${page < pages ? html`<a href="${link(page + 1)}" rel="next">Next page</a>` : ""}</nav>`;
}

const table = (label: string, head: string[], rows: Html[]) =>
  html`<div class="table-wrap" tabindex="0" role="region" aria-label="${label}"><table>
<thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;

export function customerRoutes(router: Router, d: CustomerPageDeps) {
  const { clients, render, needs, can, audited } = d;

  const notFound = (res: Response) =>
    render(
      res,
      "Customer not found",
      html`<p>No such customer. <a href="/admin/customers">Back to Customers</a></p>`,
      {
        status: 404,
        current: CURRENT,
      },
    );
  // A path that names no customer is a 404 before any call is made, so a tab's calls, made side
  // by side, never see a malformed id.
  router.use("/customers/:id", (req, res, next) => (isUuid(String(req.params.id)) ? next() : notFound(res)));

  /** The customer and its people, or a 404 page (undefined) for an id that names none. */
  async function load(req: Request, res: Response) {
    try {
      return await clients.auth.getCustomer({ customerId: String(req.params.id) });
    } catch (err) {
      if (resolveError(err).status >= 500) throw err;
      notFound(res);
      return undefined;
    }
  }

  function show(
    res: Response,
    c: Customer,
    tab: Tab,
    content: Html,
    o: { notice?: string; status?: number; error?: string; link?: Html } = {},
  ) {
    const suspended = c.status === CustomerStatus.SUSPENDED;
    const base = `/admin/customers/${c.id}`;
    const body = html`${o.link ?? ""}
<p>${suspended ? html`<strong>Suspended</strong>${c.statusReason ? `: ${c.statusReason}` : ""}` : "Active"} · ${c.email} · ${c.currency}</p>
<nav aria-label="Customer" class="tabs"><ul>${TABS.map(
      ([t, label]) =>
        html`<li><a href="${t ? `${base}/${t}` : base}"${t === tab ? html` aria-current="page"` : ""}>${label}</a></li>`,
    )}</ul></nav>
${content}`;
    render(res, c.name, body, { ...o, current: CURRENT });
  }

  const done = (req: Request) => (typeof req.query.done === "string" ? DONE[req.query.done] : undefined);
  const back = (res: Response, id: string, tab: Tab, word: string) =>
    res.redirect(303, `/admin/customers/${id}${tab ? `/${tab}` : ""}?done=${word}`);

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
  can(res, "edit_clients")
    ? html`<h2>Edit the profile</h2>
<form method="post" action="/admin/customers/${c.id}/profile" novalidate>
${formFields(csrf)}
${generalError(p)}
${field(p, "name", "Name", { required: true })}
${field(p, "email", "E-mail address", { type: "email", required: true })}
${field(p, "company", "Company")}
${field(p, "country", "Country (two letters)", { hint: "ISO 3166-1, e.g. DE; empty: none" })}
<button type="submit">Save the profile</button>
</form>
<h2>${suspended ? "Lift the suspension" : "Suspend the customer"}</h2>
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

  router.post(
    "/customers/:id/profile",
    needs("edit_clients", CURRENT, async (req, res) => {
      const r = await load(req, res);
      if (!r) return;
      const c = r.customer!;
      const values = {
        name: String(req.body.name ?? ""),
        email: String(req.body.email ?? ""),
        company: String(req.body.company ?? ""),
        country: String(req.body.country ?? ""),
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
    }),
  );

  for (const [action, status] of [
    ["suspend", CustomerStatus.SUSPENDED],
    ["unsuspend", CustomerStatus.ACTIVE],
  ] as const) {
    router.post(
      `/customers/:id/${action}`,
      needs("edit_clients", CURRENT, async (req, res) => {
        const r = await load(req, res);
        if (!r) return;
        const c = r.customer!;
        const reason = String(req.body.reason ?? "").trim();
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
      }),
    );
  }

  // People -------------------------------------------------------------------------------------
  async function peopleTab(
    req: Request,
    res: Response,
    o: { f?: FormState; code?: number; link?: Html } = {},
  ) {
    const r = await load(req, res);
    if (!r) return;
    const c = r.customer!;
    const edit = can(res, "edit_clients");
    const csrf = sessionOf(res).csrfToken;
    const f = o.f ?? emptyForm();
    const boxes = (prefix: string, chosen: readonly string[]) =>
      html`<ul class="plain">${ALL_PERMISSIONS.map(
        (p) =>
          html`<li><input type="checkbox" id="${prefix}-${p}" name="permissions" value="${p}"${chosen.includes(p) ? html` checked` : ""}> <label for="${prefix}-${p}">${PERMISSIONS[p]}</label></li>`,
      )}</ul>`;
    const held = (p: Person) =>
      p.isOwner ? "All" : p.permissions.map((x) => PERMISSIONS[x as Permission] ?? x).join(", ") || "None";
    const content = html`<h2>People</h2>
${table(
  "People",
  ["Name", "E-mail", "Role", "Permissions", ...(edit ? ["Sign-in"] : [])],
  r.people.map(
    (p) =>
      html`<tr><td>${p.name}</td><td>${p.email}</td><td>${p.isOwner ? "Owner" : "Member"}</td><td>${held(p)}</td>${
        edit
          ? p.hasPassword
            ? // Only the person sets a password they already have (no takeover by staff).
              html`<td>Password set</td>`
            : html`<td><form method="post" action="/admin/customers/${c.id}/people/${p.id}/link">${formFields(csrf)}<button type="submit">Set-password link<span class="sr"> for ${p.name}</span></button></form></td>`
          : ""
      }</tr>`,
  ),
)}
${
  edit
    ? html`${r.people
        .filter((p) => !p.isOwner)
        .map(
          (
            p,
          ) => html`<form method="post" action="/admin/customers/${c.id}/people/${p.id}/permissions" class="card">${formFields(csrf)}
<fieldset><legend>Permissions of ${p.name}</legend>${boxes(`pp-${p.id}`, p.permissions)}</fieldset>
<button type="submit">Save permissions<span class="sr"> of ${p.name}</span></button></form>`,
        )}
<h2>Add a person</h2>
<form method="post" action="/admin/customers/${c.id}/people" novalidate>
${formFields(csrf)}
${generalError(f)}
${field(f, "name", "Name", { required: true })}
${field(f, "email", "E-mail address", { type: "email", required: true })}
<fieldset><legend>Permissions</legend>${boxes("np", (f.values.permissions ?? "").split(","))}</fieldset>
<button type="submit">Add person</button>
</form>`
    : ""
}`;
    show(res, c, "people", content, { notice: done(req), status: o.code, link: o.link });
  }

  router.get(
    "/customers/:id/people",
    needs("view_clients", CURRENT, (req, res) => peopleTab(req, res)),
  );

  router.post(
    "/customers/:id/people",
    needs("edit_clients", CURRENT, async (req, res) => {
      const { permissions, values } = personFormValues(req.body);
      const customerId = String(req.params.id);
      try {
        const { person } = await audited(
          res,
          {
            action: "person.create",
            customerId,
            after: { name: values.name, email: values.email, permissions },
          },
          () =>
            clients.auth.createPerson({ customerId, name: values.name, email: values.email, permissions }),
          (r) => ({ after: { id: r.person!.id, name: r.person!.name, email: r.person!.email, permissions } }),
        );
        // The link is shown once, on this answer: it is a credential, so no redirect carries it.
        const link = await audited(
          res,
          { action: "person.password_link", customerId, target: person!.id },
          () => d.linkFor(Realm.PORTAL, person!.id),
        );
        await peopleTab(req, res, { link: d.linkPanel(person!.name, link) });
      } catch (err) {
        await peopleTab(req, res, { f: formErrors(err, values), code: resolveError(err).status });
      }
    }),
  );

  router.post(
    "/customers/:id/people/:person/link",
    needs("edit_clients", CURRENT, async (req, res) => {
      const r = await load(req, res);
      if (!r) return;
      const p = r.people.find((x) => x.id === req.params.person);
      if (!p) return show(res, r.customer!, "people", html`<p>No such person.</p>`, { status: 404 });
      const link = await audited(
        res,
        { action: "person.password_link", customerId: r.customer!.id, target: p.id },
        () => d.linkFor(Realm.PORTAL, p.id),
      );
      await peopleTab(req, res, { link: d.linkPanel(p.name, link) });
    }),
  );

  router.post(
    "/customers/:id/people/:person/permissions",
    needs("edit_clients", CURRENT, async (req, res) => {
      const r = await load(req, res);
      if (!r) return;
      const c = r.customer!;
      const p = r.people.find((x) => x.id === req.params.person);
      if (!p) return show(res, c, "people", html`<p>No such person.</p>`, { status: 404 });
      const permissions = checkedPermissions(req.body);
      try {
        await audited(
          res,
          {
            action: "person.permissions",
            customerId: c.id,
            target: p.id,
            before: { permissions: p.permissions },
            after: { permissions },
          },
          () => clients.auth.setPermissions({ personId: p.id, permissions }),
        );
        back(res, c.id, "people", "permissions");
      } catch (err) {
        const e = resolveError(err);
        if (e.status >= 500) throw err;
        await peopleTab(req, res, { f: { values: {}, errors: {}, general: e.message }, code: e.status });
      }
    }),
  );

  // Services -----------------------------------------------------------------------------------
  async function servicesTab(req: Request, res: Response, o: { error?: string; code?: number } = {}) {
    const page = pageOf(req.query.services_page);
    const [r, b] = await Promise.all([
      load(req, res),
      clients.billing.deskGetCustomerBilling({ customerId: String(req.params.id), servicesPage: page }),
    ]);
    if (!r) return;
    const c = r.customer!;
    const edit = can(res, "edit_clients");
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
          return html`<tr><td>${s.name}</td><td class="mono">${s.hostname || "—"}</td><td>${enumWord(ProductKindSchema, s.kind)}</td>
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

  router.post(
    "/customers/:id/services/:service/power",
    needs("edit_clients", CURRENT, async (req, res) => {
      const customerId = String(req.params.id);
      const serviceId = String(req.params.service);
      const name = String(req.body.action ?? "");
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
    }),
  );

  // Invoices and proformas -------------------------------------------------------------------
  router.get(
    "/customers/:id/documents",
    needs("view_clients", CURRENT, async (req, res) => {
      const inv = pageOf(req.query.invoices_page);
      const pro = pageOf(req.query.proformas_page);
      const [r, b] = await Promise.all([
        load(req, res),
        clients.billing.deskGetCustomerBilling({
          customerId: String(req.params.id),
          invoicesPage: inv,
          proformasPage: pro,
        }),
      ]);
      if (!r) return;
      const c = r.customer!;
      const base = `/admin/customers/${c.id}/documents`;
      const docs = (label: string, list: Document[]) =>
        list.length === 0
          ? html`<p class="empty">No ${label.toLowerCase()}.</p>`
          : table(
              label,
              ["Number", "Status", "Total", "Paid", "Due", "Created", "Due date"],
              list.map(
                (
                  x,
                ) => html`<tr><td class="mono">${x.number}</td><td>${word(enumWord(DocumentStatusSchema, x.status))}</td>
<td>${amount(x.total)}</td><td>${amount(x.amountPaid)}</td><td>${amount(x.amountDue)}</td><td>${when(x.createdAt)}</td><td>${day(x.dueDate)}</td></tr>`,
              ),
            );
      const content = html`<h2>Invoices</h2>
<p>${b.invoicesTotal} ${b.invoicesTotal === 1 ? "invoice" : "invoices"}.</p>
${docs("Invoices", b.invoices)}
${pager(base, "invoices_page", inv, b.invoicesTotal, { proformas_page: String(pro) })}
<h2>Proformas</h2>
<p>${b.proformasTotal} ${b.proformasTotal === 1 ? "proforma" : "proformas"}.</p>
${docs("Proformas", b.proformas)}
${pager(base, "proformas_page", pro, b.proformasTotal, { invoices_page: String(inv) })}`;
      show(res, c, "documents", content, { notice: done(req) });
    }),
  );

  // Balance and transactions ------------------------------------------------------------------
  async function balanceTab(req: Request, res: Response, o: { f?: FormState; code?: number } = {}) {
    const page = pageOf(req.query.transactions_page);
    const [r, b, staff] = await Promise.all([
      load(req, res),
      clients.billing.deskGetCustomerBilling({ customerId: String(req.params.id), transactionsPage: page }),
      clients.portal.listStaff({}),
    ]);
    if (!r) return;
    const c = r.customer!;
    const people = new Map(r.people.map((p) => [p.id, p.name]));
    const staffNames = new Map(staff.staff.map((s) => [s.id, s.name]));
    const owner = r.people.find((p) => p.isOwner);
    const f = o.f ?? emptyForm({ person: owner?.id ?? "" });
    const csrf = sessionOf(res).csrfToken;
    const content = html`<h2>Balances</h2>
${
  b.balances.length === 0
    ? html`<p class="empty">No one in this account has held credit yet (0 ${c.currency}).</p>`
    : table(
        "Balances",
        ["Person", "Balance"],
        b.balances.map(
          (x) => html`<tr><td>${people.get(x.personId) ?? x.personId}</td><td>${amount(x.balance)}</td></tr>`,
        ),
      )
}
${
  can(res, "edit_clients")
    ? html`<h2>Adjust credit</h2>
<p>A positive amount adds credit, a negative one takes it back; a debit never takes a balance below zero. The reason is the transaction's description, which the customer sees, and your name is kept with it.</p>
<form method="post" action="/admin/customers/${c.id}/credit" novalidate>
${formFields(csrf)}
${generalError(f)}
<div class="field${f.errors.person ? " invalid" : ""}"><label for="f-person">Whose balance</label>
<select id="f-person" name="person"${f.errors.person ? html` aria-invalid="true" aria-describedby="f-person-error"` : ""}>${r.people.map(
        (p) =>
          html`<option value="${p.id}"${f.values.person === p.id ? html` selected` : ""}>${p.name}${p.isOwner ? " (owner)" : ""}</option>`,
      )}</select>${f.errors.person ? html`<p class="error" id="f-person-error">${f.errors.person}</p>` : ""}</div>
${field(f, "amount", `Amount (${c.currency})`, { required: true, hint: "e.g. 25 or -5.50" })}
${field(f, "reason", "Reason", { required: true, multiline: true })}
<button type="submit">Adjust credit</button>
</form>`
    : ""
}
<h2>Transactions</h2>
<p>${b.transactionsTotal} ${b.transactionsTotal === 1 ? "transaction" : "transactions"}.</p>
${
  b.transactions.length === 0
    ? html`<p class="empty">No transactions.</p>`
    : table(
        "Transactions",
        ["When", "Person", "Kind", "Amount", "Balance after", "Description", "By staff"],
        b.transactions.map(({ transaction: t, personId, staffId }) => {
          return html`<tr><td>${when(t?.createdAt)}</td><td>${people.get(personId) ?? personId}</td><td>${word(enumWord(TransactionKindSchema, t?.kind ?? 0))}</td>
<td>${amount(t?.amount)}</td><td>${amount(t?.balanceAfter)}</td><td>${t?.description ?? ""}</td><td>${staffId ? (staffNames.get(staffId) ?? staffId) : "—"}</td></tr>`;
        }),
      )
}
${pager(`/admin/customers/${c.id}/balance`, "transactions_page", page, b.transactionsTotal)}`;
    show(res, c, "balance", content, { notice: done(req), status: o.code });
  }

  router.get(
    "/customers/:id/balance",
    needs("view_clients", CURRENT, (req, res) => balanceTab(req, res)),
  );

  router.post(
    "/customers/:id/credit",
    needs("edit_clients", CURRENT, async (req, res) => {
      const customerId = String(req.params.id);
      const values = {
        person: String(req.body.person ?? ""),
        amount: String(req.body.amount ?? "").trim(),
        reason: String(req.body.reason ?? ""),
      };
      const errors: Record<string, string> = {};
      const read = readMoney(values.amount);
      if (!read.ok || read.units === 0n)
        errors.amount = "Enter a non-zero amount with at most 4 decimals, e.g. 25 or -5.50";
      if (!values.reason.trim()) errors.reason = "Say why the balance changes";
      if (Object.keys(errors).length) return balanceTab(req, res, { f: { values, errors }, code: 400 });
      try {
        await audited(
          res,
          {
            action: "credit.adjust",
            customerId,
            target: values.person,
            after: { amount: values.amount },
            reason: values.reason.trim(),
            settle: settleMoneyWrite(clients),
          },
          (auditId) =>
            clients.billing.deskAdjustCredit({
              customerId,
              personId: values.person,
              staffId: sessionOf(res).subjectId,
              amount: values.amount,
              reason: values.reason,
              // The audit entry's id: billing credits once per key, and settles a lost answer by it.
              idempotencyKey: auditId,
            }),
          (r) => ({
            after: {
              amount: values.amount,
              balance: r.balance?.amount ?? "",
              transaction_id: String(r.transactionId),
            },
          }),
        );
        back(res, customerId, "balance", "credit");
      } catch (err) {
        if (err instanceof OutcomeUnknown) {
          // Kept on the page (not in the form, which comes back empty): sending it again is a new write.
          return balanceTab(req, res, { f: { values: {}, errors: {}, general: err.message }, code: 503 });
        }
        await balanceTab(req, res, {
          f: formErrors(err, values, { person_id: "person" }),
          code: resolveError(err).status,
        });
      }
    }),
  );

  // Keys and request log ----------------------------------------------------------------------
  router.get(
    "/customers/:id/keys",
    needs("view_clients", CURRENT, async (req, res) => {
      const staffId = sessionOf(res).subjectId;
      const customerId = String(req.params.id);
      const [r, keys, log] = await Promise.all([
        load(req, res),
        clients.auth.staffListKeys({ staffId, customerId }),
        clients.auth.staffListRequestLog({ staffId, customerId, limit: 1000 }),
      ]);
      if (!r) return;
      const c = r.customer!;
      const labels = new Map(keys.keys.map((k) => [k.id, k.label]));
      const content = html`<h2>API keys</h2>
${keyTable(c.id, keys.keys, can(res, "edit_clients"), sessionOf(res).csrfToken)}
<h2>Request log</h2>
${requestLogView(log.entries, logFilterOf(req.query), `/admin/customers/${c.id}/keys`, { keyLabels: labels, duration: true })}`;
      show(res, c, "keys", content, { notice: done(req) });
    }),
  );

  // Revoking goes through auth's StaffRevokeKey, which checks edit clients itself as well.
  router.post(
    "/customers/:id/keys/:key/revoke",
    needs("edit_clients", CURRENT, async (req, res) => {
      const staffId = sessionOf(res).subjectId;
      const customerId = String(req.params.id);
      const keyId = String(req.params.key);
      const { keys } = await clients.auth.staffListKeys({ staffId, customerId });
      const k = keys.find((x) => x.id === keyId);
      if (!k) {
        const r = await load(req, res);
        if (r) show(res, r.customer!, "keys", html`<p>No such key.</p>`, { status: 404 });
        return;
      }
      await audited(
        res,
        {
          action: "key.revoke",
          customerId,
          target: keyId,
          before: { label: k.label, key: k.display, status: keyStatus(k) },
          after: { status: "revoked" },
        },
        () => clients.auth.staffRevokeKey({ staffId, keyId }),
      );
      back(res, customerId, "keys", "revoked");
    }),
  );

  // Partner ------------------------------------------------------------------------------------
  router.get(
    "/customers/:id/partner",
    needs("view_clients", CURRENT, async (req, res) => {
      const [r, { partners }] = await Promise.all([
        load(req, res),
        clients.portal.listPartners({ customerId: String(req.params.id) }),
      ]);
      if (!r) return;
      const c = r.customer!;
      const p = partners[0]?.partner;
      const content = p
        ? html`<h2>Reseller partner</h2><dl class="facts"><dt>Status</dt><dd>${enumWord(PartnerStatusSchema, p.status)}</dd>
<dt>Applied</dt><dd>${when(p.createdAt)}</dd><dt>Signing secret</dt><dd>${p.hasSecret ? `issued ${when(p.secretRotatedAt)}` : "none"}</dd></dl>
<p><a href="/admin/partners/${c.id}">Open the partner's settings and activity</a></p>`
        : html`<h2>Reseller partner</h2><p class="empty">This customer has not applied to the reseller programme.</p>`;
      show(res, c, "partner", content);
    }),
  );

  // Audit log ----------------------------------------------------------------------------------
  router.get(
    "/customers/:id/audit",
    needs("view_clients", CURRENT, async (req, res) => {
      const page = pageOf(req.query.audit_page);
      const [r, a] = await Promise.all([
        load(req, res),
        clients.auth.listStaffActions({ customerId: String(req.params.id), page, limit: PAGE }),
      ]);
      if (!r) return;
      const c = r.customer!;
      const content = html`<h2>Audit log</h2>
<p>Every change staff made to this customer, newest first: ${a.total} ${a.total === 1 ? "entry" : "entries"}.</p>
${a.actions.length === 0 ? html`<p class="empty">No staff changes yet.</p>` : auditTable(a.actions)}
${pager(`/admin/customers/${c.id}/audit`, "audit_page", page, a.total)}`;
      show(res, c, "audit", content);
    }),
  );
}

const keyStatus = (k: ApiKey) => enumWord(ApiKeyStatusSchema, k.status) || "active";

function keyTable(customerId: string, keys: ApiKey[], edit: boolean, csrf: string): Html {
  if (!keys.length) return html`<p class="empty">No keys.</p>`;
  return table(
    "API keys",
    [
      "Key",
      "Label",
      "Scopes",
      "IP allowlist",
      "Expires",
      "Last used",
      "Status",
      ...(edit ? ["Actions"] : []),
    ],
    keys.map(
      (k) => html`<tr><td class="mono key">${k.display}</td><td>${k.label}</td><td>${k.scopes.join(", ")}</td>
<td>${k.ipAllowlist.join(", ") || "Any address"}</td><td>${day(k.expiresOn) || "Never"}</td>
<td>${k.lastUsedAt ? html`${when(k.lastUsedAt)}<br><span class="mono">${k.lastUsedIp}</span>` : "Never"}</td>
<td>${k.status === ApiKeyStatus.REVOKED ? `Revoked ${when(k.revokedAt)}` : k.status === ApiKeyStatus.EXPIRED ? "Expired" : "Active"}</td>${
        edit
          ? html`<td>${
              k.status === ApiKeyStatus.REVOKED
                ? ""
                : html`<form method="post" action="/admin/customers/${customerId}/keys/${k.id}/revoke">${formFields(csrf)}<button type="submit" class="danger">Revoke<span class="sr"> ${k.label}</span></button></form>`
            }</td>`
          : ""
      }</tr>`,
    ),
  );
}

const OUTCOME: Record<number, string> = {
  [StaffActionOutcome.PENDING]: "Pending (outcome not recorded)",
  [StaffActionOutcome.SUCCEEDED]: "Done",
  [StaffActionOutcome.FAILED]: "Refused",
  [StaffActionOutcome.UNKNOWN]: "Unknown (answer lost; being settled)",
};

/** A JSON object of the log as "key: value" lines. */
function factsOf(json: string): string {
  if (!json) return "—";
  try {
    const v = JSON.parse(json) as Record<string, unknown>;
    return Object.entries(v)
      .map(([k, x]) => `${k}: ${typeof x === "string" ? x : JSON.stringify(x)}`)
      .join("; ");
  } catch {
    return json;
  }
}

function auditTable(actions: StaffAction[]): Html {
  return table(
    "Audit log",
    ["When", "Staff", "Action", "Target", "Before", "After", "Reason", "Outcome"],
    actions.map(
      (
        a,
      ) => html`<tr><td>${when(a.createdAt)}</td><td>${a.staffName}<br><span class="hint">${a.staffEmail}</span></td>
<td class="mono">${a.action}</td><td class="mono">${a.target || "—"}</td><td>${factsOf(a.before)}</td><td>${factsOf(a.after)}</td>
<td>${a.reason || "—"}</td><td>${OUTCOME[a.outcome] ?? "—"}${a.error ? html`: ${a.error}` : ""}</td></tr>`,
    ),
  );
}
