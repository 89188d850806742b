import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { type Logger, resolveError, type StaffPermission } from "@hb/platform";
import express, { type Request, type Response, type Router } from "express";
import type { PageClients } from "../clients.ts";
import { actionRoutes } from "./admin-act.ts";
import { ADMIN_PAGES, allowed } from "./admin-actions.ts";
import { bankTransferRoutes } from "./admin-bank-transfers.ts";
import { cardPaymentRoutes } from "./admin-card-payments.ts";
import { customerRoutes } from "./admin-customer.ts";
import { onceForm } from "./admin-once.ts";
import type { AdminDeps } from "./admin-page.ts";
import { partnerRoutes } from "./admin-partners.ts";
import { searchRoutes } from "./admin-search.ts";
import { settingsRoutes } from "./admin-settings.ts";
import { STAFF_LABELS, staffRoutes } from "./admin-staff.ts";
import type { OnceStore } from "./customer/once.ts";
import { paginate, when } from "./format.ts";
import { emptyForm, type FormState, field, formErrors, formFields, generalError } from "./forms.ts";
import { type Html, html } from "./html.ts";
import { page } from "./layout.ts";
import { sendPage } from "./respond.ts";
import { ADMIN, type CookieWriter, requireSession, sessionOf } from "./session.ts";
import { signInRoutes } from "./sign-in.ts";
import { auditor } from "./staff-audit.ts";

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
        // Only the pages this staff member may open: no menu item answers 403.
        nav: ADMIN_PAGES.filter((p) => s.permissions.includes(p.permission)),
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
  const act = actionRoutes(router, needs, audited, render);
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
  allowed(res, "customer.create")
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

  act("customer.create", async (_req, res, values, audited) => {
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
  });

  // No module gets the bare auditor: a write audits through its table entry (admin-act.ts).
  const deps: AdminDeps = { clients, render, needs, act, linkFor, linkPanel };
  customerRoutes(router, deps);
  staffRoutes(router, deps);
  settingsRoutes(router, deps);
  searchRoutes(router, deps);
  partnerRoutes(router, deps);
  bankTransferRoutes(router, deps);
  cardPaymentRoutes(router, clients, render, needs);
  return router;
}
