import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { type Logger, resolveError, STAFF_PERMISSIONS } from "@hb/platform";
import express, { type Request, type Response, type Router } from "express";
import type { PageClients } from "../clients.ts";
import { bankTransferRoutes } from "./admin-bank-transfers.ts";
import { cardPaymentRoutes } from "./admin-card-payments.ts";
import { customerRoutes } from "./admin-customer.ts";
import { onceForm } from "./admin-once.ts";
import type { AdminNeeds, AdminRender } from "./admin-page.ts";
import { partnerRoutes } from "./admin-partners.ts";
import type { OnceStore } from "./customer/once.ts";
import { paginate, when } from "./format.ts";
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
import { page } from "./layout.ts";
import { sendPage } from "./respond.ts";
import { ADMIN, type CookieWriter, requireSession, sessionOf } from "./session.ts";
import { signInRoutes } from "./sign-in.ts";
import { type Audited, auditor } from "./staff-audit.ts";

type StaffPermission = (typeof STAFF_PERMISSIONS)[number];
const STAFF_LABELS: Record<StaffPermission, string> = {
  view_clients: "View clients",
  edit_clients: "Edit clients",
  approve_overpayments: "Approve overpayments",
};

const NAV = [
  { href: "/admin/customers", label: "Customers" },
  { href: "/admin/partners", label: "Partners" },
  { href: "/admin/bank-transfers", label: "Bank transfers" },
  { href: "/admin/card-payments", label: "Card payments" },
  { href: "/admin/staff", label: "Staff" },
  { href: "/admin/settings", label: "Settings" },
];

/**
 * The admin panel. View clients lets staff see customers, people, keys and request logs; edit
 * clients lets them change anything (customers, people, keys, staff, settings). No page ever shows
 * an API key's secret.
 */
export function adminRouter(
  clients: PageClients,
  setCookie: CookieWriter,
  publicUrl: string,
  once: OnceStore,
  log?: Logger,
): Router {
  const router = express.Router();
  const audited = auditor(clients, log);
  signInRoutes(router, ADMIN, clients, setCookie);
  router.use(requireSession(ADMIN, clients));

  function render(
    res: Response,
    title: string,
    body: Html,
    o: { notice?: string; status?: number; current: string; error?: string },
  ) {
    const s = sessionOf(res);
    sendPage(
      res,
      page({
        title,
        area: ADMIN.name,
        body,
        nav: NAV,
        current: o.current,
        notice: o.notice,
        error: o.error,
        user: { name: s.name, signOut: "/admin/sign-out", csrf: s.csrfToken },
      }),
      o.status,
    );
  }
  const can = (res: Response, p: StaffPermission) => sessionOf(res).permissions.includes(p);
  const onceWrite = onceForm(once, (res, title, body, status) =>
    render(res, title, body, { status, current: "/admin/customers" }),
  );
  /** A handler that needs a staff permission; without it the page says which one. */
  const needs =
    (p: StaffPermission, current: string, fn: (req: Request, res: Response) => Promise<void>) =>
    (req: Request, res: Response, next: (e: unknown) => void) => {
      if (!can(res, p)) {
        return render(
          res,
          "Not allowed",
          html`<p>This needs the staff permission <strong>${STAFF_LABELS[p]}</strong>.</p>`,
          {
            status: 403,
            current,
          },
        );
      }
      const route = () => {
        fn(req, res).catch(next);
      };
      // Every write acts once per form (admin-once.ts).
      if (req.method === "POST") onceWrite(req, res, route).catch(next);
      else route();
    };
  const linkFor = async (realm: Realm, subjectId: string) => {
    const r = await clients.portal.createPasswordLink({ realm, subjectId });
    const base = realm === Realm.ADMIN ? "/admin" : "/portal";
    return `${publicUrl}${base}/set-password?token=${encodeURIComponent(r.token)}`;
  };
  const linkPanel = (name: string, url: string) =>
    html`<section class="secret" aria-labelledby="link-title"><h2 id="link-title">Set-password link for ${name}</h2>
<p class="warning">Send this link to ${name}. It works once and is shown only now.</p>
<label for="new-link">Link</label><div class="copy-row"><input id="new-link" class="mono" readonly value="${url}"> <button type="button" data-copy="new-link" hidden>Copy</button></div></section>`;

  router.get("/", (_req, res) => res.redirect(303, "/admin/customers"));

  // Customers -------------------------------------------------------------------------------
  async function customersPage(
    res: Response,
    f: FormState,
    o: { status?: number; link?: Html; q?: string; page?: unknown } = {},
  ) {
    const s = sessionOf(res);
    const { customers: all } = await clients.auth.listCustomers({ email: "" });
    // Search by name, e-mail, company or id, in the gateway over auth's list (at most 1,000
    // customers; a search in auth is the next step past that, like the request log's).
    const q = (o.q ?? "").trim().toLowerCase();
    const matching = q
      ? all.filter((c) => [c.name, c.email, c.company, c.id].some((v) => v.toLowerCase().includes(q)))
      : all;
    const shown = paginate(matching, o.page, 50);
    const pageLink = (n: number) =>
      `/admin/customers?${new URLSearchParams({ ...(q ? { q: o.q ?? "" } : {}), page: String(n) })}`;
    const customers = shown.rows;
    const body = html`${o.link ?? ""}
<form method="get" action="/admin/customers" class="filters" role="search">
<div class="field"><label for="f-q">Search customers</label><input id="f-q" name="q" type="search" value="${o.q ?? ""}" aria-describedby="f-q-hint"><p class="hint" id="f-q-hint">Name, e-mail, company or id.</p></div>
<button type="submit">Search</button></form>
<p>${shown.total} ${shown.total === 1 ? "customer" : "customers"}${q ? " match" : ""}.</p>
${
  shown.total === 0
    ? html`<p class="empty">${q ? "No customer matches this search." : "No customers yet."}</p>`
    : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Customers"><table>
<thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Company</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${customers.map(
        (
          c,
        ) => html`<tr><td><a href="/admin/customers/${c.id}">${c.name}</a></td><td>${c.email}</td><td>${c.company}</td>
<td>${c.status === CustomerStatus.SUSPENDED ? "Suspended" : "Active"}</td><td>${when(c.createdAt)}</td></tr>`,
      )}</tbody></table></div>`
}
${
  shown.pages > 1
    ? html`<nav class="pager" aria-label="Pages">${shown.page > 1 ? html`<a href="${pageLink(shown.page - 1)}" rel="prev">Previous page</a>` : ""}<span>Page ${shown.page} of ${shown.pages}</span>${shown.page < shown.pages ? html`<a href="${pageLink(shown.page + 1)}" rel="next">Next page</a>` : ""}</nav>`
    : ""
}
${
  can(res, "edit_clients")
    ? html`<h2>Create a customer</h2>
<form method="post" action="/admin/customers" novalidate>
${formFields(s.csrfToken)}
${generalError(f)}
${field(f, "name", "Owner's name", { required: true })}
${field(f, "email", "E-mail address", { type: "email", required: true })}
${field(f, "company", "Company")}
${field(f, "country", "Country (two letters)")}
${field(f, "currency", "Currency", { hint: "ISO code; empty: EUR" })}
<button type="submit">Create customer</button>
</form>`
    : ""
}`;
    render(res, "Customers", body, { status: o.status, current: "/admin/customers" });
  }

  router.get(
    "/customers",
    needs("view_clients", "/admin/customers", (req, res) =>
      customersPage(res, emptyForm(), {
        q: typeof req.query.q === "string" ? req.query.q.slice(0, 200) : "",
        page: req.query.page,
      }),
    ),
  );

  router.post(
    "/customers",
    needs("edit_clients", "/admin/customers", async (req, res) => {
      const values = {
        name: String(req.body.name ?? ""),
        email: String(req.body.email ?? ""),
        company: String(req.body.company ?? ""),
        country: String(req.body.country ?? ""),
        currency: String(req.body.currency ?? ""),
      };
      try {
        const r = await audited(
          res,
          { action: "customer.create", after: values },
          () => clients.auth.createCustomer(values),
          (r) => ({ customerId: r.customer!.id }),
        );
        res.redirect(303, `/admin/customers/${r.customer!.id}?done=created`);
      } catch (err) {
        await customersPage(res, formErrors(err, values), { status: resolveError(err).status });
      }
    }),
  );

  customerRoutes(router, { clients, render, needs, can, audited, linkFor, linkPanel });
  staffRoutes(router, clients, render, needs, audited, linkFor, linkPanel);
  settingsRoutes(router, clients, render, needs, can, audited);
  partnerRoutes(router, clients, render, needs, can, audited);
  bankTransferRoutes(router, clients, render, needs, can, audited);
  cardPaymentRoutes(router, clients, render, needs);
  return router;
}

function staffBoxes(prefix: string, chosen: readonly string[]): Html {
  return html`<ul class="plain">${STAFF_PERMISSIONS.map(
    (p) =>
      html`<li><input type="checkbox" id="${prefix}-${p}" name="permissions" value="${p}"${chosen.includes(p) ? html` checked` : ""}> <label for="${prefix}-${p}">${STAFF_LABELS[p]}</label></li>`,
  )}</ul>`;
}

function staffRoutes(
  router: Router,
  clients: PageClients,
  render: AdminRender,
  needs: AdminNeeds,
  audited: Audited,
  linkFor: (realm: Realm, id: string) => Promise<string>,
  linkPanel: (name: string, url: string) => Html,
) {
  async function staffPage(
    res: Response,
    f: FormState,
    o: { link?: Html; status?: number; notice?: string } = {},
  ) {
    const s = sessionOf(res);
    const { staff } = await clients.portal.listStaff({});
    const body = html`${o.link ?? ""}
${staff.map(
  (
    m,
  ) => html`<section class="card" aria-labelledby="s-${m.id}"><h2 id="s-${m.id}">${m.name} <span class="hint">${m.email}</span></h2>
<form method="post" action="/admin/staff/${m.id}/permissions">${formFields(s.csrfToken)}
<fieldset><legend>Permissions of ${m.name}</legend>${staffBoxes(`sp-${m.id}`, m.permissions)}</fieldset>
<button type="submit">Save permissions<span class="sr"> of ${m.name}</span></button></form>
<form method="post" action="/admin/staff/${m.id}/link" class="inline">${formFields(s.csrfToken)}<button type="submit">Set-password link<span class="sr"> for ${m.name}</span></button></form>
</section>`,
)}
<h2>Add a staff member</h2>
<form method="post" action="/admin/staff" novalidate>
${formFields(s.csrfToken)}
${generalError(f)}
${field(f, "name", "Name", { required: true })}
${field(f, "email", "E-mail address", { type: "email", required: true })}
<fieldset><legend>Permissions</legend>${staffBoxes("ns", (f.values.permissions ?? "").split(","))}</fieldset>
<button type="submit">Add staff member</button>
</form>`;
    render(res, "Staff", body, { status: o.status, notice: o.notice, current: "/admin/staff" });
  }

  // Managing staff accounts is an edit: only staff with edit clients see or change them.
  router.get(
    "/staff",
    needs("edit_clients", "/admin/staff", (_req, res) => staffPage(res, emptyForm())),
  );
  router.post(
    "/staff",
    needs("edit_clients", "/admin/staff", async (req, res) => {
      const { permissions, values } = personFormValues(req.body);
      try {
        const { staff } = await audited(
          res,
          { action: "staff.create", after: { name: values.name, email: values.email, permissions } },
          () => clients.auth.createStaff({ name: values.name, email: values.email, permissions }),
          (r) => ({ after: { id: r.staff!.id, name: r.staff!.name, email: r.staff!.email, permissions } }),
        );
        const link = await audited(res, { action: "staff.password_link", target: staff!.id }, () =>
          linkFor(Realm.ADMIN, staff!.id),
        );
        await staffPage(res, emptyForm(), { link: linkPanel(staff!.name, link) });
      } catch (err) {
        await staffPage(res, formErrors(err, values), { status: resolveError(err).status });
      }
    }),
  );
  router.post(
    "/staff/:id/permissions",
    needs("edit_clients", "/admin/staff", async (req, res) => {
      const staffId = String(req.params.id);
      const permissions = checkedPermissions(req.body);
      const before = (await clients.portal.listStaff({})).staff.find((m) => m.id === staffId);
      if (!before) return staffPage(res, emptyForm(), { status: 404, notice: "No such staff member." });
      const r = await audited(
        res,
        {
          action: "staff.permissions",
          target: staffId,
          before: { permissions: before.permissions },
          after: { permissions },
        },
        () => clients.portal.setStaffPermissions({ staffId, permissions }),
      );
      await staffPage(res, emptyForm(), { notice: `Saved the permissions of ${r.staff!.name}.` });
    }),
  );
  router.post(
    "/staff/:id/link",
    needs("edit_clients", "/admin/staff", async (req, res) => {
      const { staff } = await clients.portal.listStaff({});
      const m = staff.find((x) => x.id === req.params.id);
      if (!m) return staffPage(res, emptyForm(), { status: 404, notice: "No such staff member." });
      const link = await audited(res, { action: "staff.password_link", target: m.id }, () =>
        linkFor(Realm.ADMIN, m.id),
      );
      await staffPage(res, emptyForm(), { link: linkPanel(m.name, link) });
    }),
  );
}

const SETTINGS_FIELDS = {
  hourly_request_limit: "hourly",
  active_key_limit: "keys",
  max_attempts: "max_attempts",
  base_delay_seconds: "base_delay",
};

function settingsRoutes(
  router: Router,
  clients: PageClients,
  render: AdminRender,
  needs: AdminNeeds,
  can: (res: Response, p: StaffPermission) => boolean,
  audited: Audited,
) {
  async function settingsPage(
    res: Response,
    api: FormState,
    hooks: FormState,
    o: { status?: number; notice?: string } = {},
  ) {
    const s = sessionOf(res);
    const edit = can(res, "edit_clients");
    const box = (f: FormState, name: string, label: string) =>
      html`<div class="check"><input type="checkbox" id="f-${name}" name="${name}" value="on"${f.values[name] === "on" ? html` checked` : ""}${edit ? "" : html` disabled`}> <label for="f-${name}">${label}</label></div>`;
    const ro = edit ? undefined : html` readonly`;
    const body = html`<h2>Customer API</h2>
<form method="post" action="/admin/settings" novalidate>
${formFields(s.csrfToken)}
${generalError(api)}
${box(api, "api", "Customer API switched on (off: the API Keys page disappears and every API request is refused)")}
${field(api, "hourly", "Hourly request limit per key", { type: "number", required: true, hint: "1 to 1,000,000", attrs: ro })}
${field(api, "keys", "Active key limit per account", { type: "number", required: true, hint: "1 to 1,000", attrs: ro })}
<fieldset><legend>Modules</legend>
${box(api, "inventory", "Inventory (dedicated servers)")}
${box(api, "vps", "VPS snapshots")}
</fieldset>
${edit ? html`<button type="submit">Save Customer API settings</button>` : ""}
</form>
<h2>Reseller Program: Webhook Settings</h2>
<form method="post" action="/admin/settings/webhooks" novalidate>
${formFields(s.csrfToken)}
${generalError(hooks)}
${field(hooks, "max_attempts", "Max Retry Attempts", { type: "number", required: true, hint: "1 to 10", attrs: ro })}
${field(hooks, "base_delay", "Base Retry Delay (seconds)", { type: "number", required: true, hint: "10 to 3600", attrs: ro })}
${edit ? html`<button type="submit">Save Webhook Settings</button>` : ""}
</form>`;
    render(res, "Settings", body, { status: o.status, notice: o.notice, current: "/admin/settings" });
  }
  const current = async () => {
    const [{ settings: a }, { settings: w }] = await Promise.all([
      clients.auth.getSettings({}),
      clients.webhooks.getProgrammeSettings({}),
    ]);
    const on = (b: boolean | undefined) => (b ? "on" : "");
    return {
      api: emptyForm({
        api: on(a?.customerApiEnabled),
        hourly: String(a?.hourlyRequestLimit ?? ""),
        keys: String(a?.activeKeyLimit ?? ""),
        inventory: on(a?.inventoryModule),
        vps: on(a?.vpsModule),
      }),
      hooks: emptyForm({
        max_attempts: String(w?.maxAttempts ?? ""),
        base_delay: String(w?.baseDelaySeconds ?? ""),
      }),
    };
  };
  /** A whole number, or an error naming the field (the service's ranges are checked by the service). */
  const integer = (v: string) => (/^-?\d{1,9}$/.test(v.trim()) ? Number(v.trim()) : undefined);

  router.get(
    "/settings",
    needs("view_clients", "/admin/settings", async (req, res) => {
      const c = await current();
      await settingsPage(res, c.api, c.hooks, { notice: req.query.saved ? "Saved." : undefined });
    }),
  );

  router.post(
    "/settings",
    needs("edit_clients", "/admin/settings", async (req, res) => {
      const values = {
        api: req.body.api === "on" ? "on" : "",
        hourly: String(req.body.hourly ?? ""),
        keys: String(req.body.keys ?? ""),
        inventory: req.body.inventory === "on" ? "on" : "",
        vps: req.body.vps === "on" ? "on" : "",
      };
      const errors: Record<string, string> = {};
      const hourly = integer(values.hourly);
      const keys = integer(values.keys);
      if (hourly === undefined) errors.hourly = "Enter a whole number from 1 to 1000000";
      if (keys === undefined) errors.keys = "Enter a whole number from 1 to 1000";
      const c = await current();
      if (Object.keys(errors).length) return settingsPage(res, { values, errors }, c.hooks, { status: 400 });
      try {
        const asked = {
          customerApiEnabled: values.api === "on",
          hourlyRequestLimit: hourly,
          activeKeyLimit: keys,
          inventoryModule: values.inventory === "on",
          vpsModule: values.vps === "on",
        };
        await audited(res, { action: "settings.customer_api", before: c.api.values, after: values }, () =>
          clients.auth.updateSettings(asked),
        );
        res.redirect(303, "/admin/settings?saved=1");
      } catch (err) {
        await settingsPage(res, formErrors(err, values, SETTINGS_FIELDS), c.hooks, {
          status: resolveError(err).status,
        });
      }
    }),
  );

  router.post(
    "/settings/webhooks",
    needs("edit_clients", "/admin/settings", async (req, res) => {
      const values = {
        max_attempts: String(req.body.max_attempts ?? ""),
        base_delay: String(req.body.base_delay ?? ""),
      };
      const errors: Record<string, string> = {};
      const maxAttempts = integer(values.max_attempts);
      const baseDelay = integer(values.base_delay);
      if (maxAttempts === undefined) errors.max_attempts = "Enter a whole number from 1 to 10";
      if (baseDelay === undefined) errors.base_delay = "Enter a whole number from 10 to 3600";
      const c = await current();
      if (Object.keys(errors).length) return settingsPage(res, c.api, { values, errors }, { status: 400 });
      try {
        await audited(res, { action: "settings.webhooks", before: c.hooks.values, after: values }, () =>
          clients.webhooks.updateProgrammeSettings({ maxAttempts, baseDelaySeconds: baseDelay }),
        );
        res.redirect(303, "/admin/settings?saved=1");
      } catch (err) {
        await settingsPage(res, c.api, formErrors(err, values, SETTINGS_FIELDS), {
          status: resolveError(err).status,
        });
      }
    }),
  );
}
