/**
 * What every tab of a customer's page in the admin panel shares: the tabs, the notices after a
 * write, the customer's header, the 404 page, and the table and pager the tabs draw with.
 */
import { type Customer, CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { type Document, DocumentStatusSchema } from "@hb/contracts/hb/billing/v1/documents_pb";
import type { Money } from "@hb/contracts/hb/platform/v1/money_pb";
import { enumWord, isUuid, resolveError } from "@hb/platform";
import type { Request, Response, Router } from "express";
import type { AdminDeps } from "./admin-page.ts";
import { money } from "./customer/ui.ts";
import { type Html, html } from "./html.ts";

export const CURRENT = "/admin/customers";
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
export type Tab = (typeof TABS)[number][0];

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

export const amount = (m: Money | undefined) => (m ? money(m.amount, m.currency) : "—");
export const word = (s: string) => (s ? s.replaceAll("_", " ") : "—");

/** A document's status for staff, and which invoice a paid proforma became (or came from): one charge. */
export const documentState = (x: Document): Html =>
  html`${word(enumWord(DocumentStatusSchema, x.status))}${x.convertedInvoiceNumber ? html`, became <span class="mono">${x.convertedInvoiceNumber}</span>` : ""}${x.fromProformaNumber ? html` (was <span class="mono">${x.fromProformaNumber}</span>)` : ""}`;
export const pageOf = (v: unknown) =>
  Math.max(1, Math.min(100_000, Number.parseInt(String(v ?? "1"), 10) || 1));
export const PAGE_ROWS = PAGE;

export function pager(
  base: string,
  param: string,
  page: number,
  total: number,
  keep: Record<string, string> = {},
) {
  const pages = Math.max(1, Math.ceil(total / PAGE));
  if (pages <= 1) return "";
  const link = (n: number) => `${base}?${new URLSearchParams({ ...keep, [param]: String(n) })}`;
  return html`<nav class="pager" aria-label="Pages of ${param.replace("_page", "")}">${page > 1 ? html`<a href="${link(page - 1)}" rel="prev">Previous page</a>` : ""}<span>Page ${Math.min(page, pages)} of ${pages}</span>${page < pages ? html`<a href="${link(page + 1)}" rel="next">Next page</a>` : ""}</nav>`;
}

export const table = (label: string, head: string[], rows: Html[]) =>
  html`<div class="table-wrap" tabindex="0" role="region" aria-label="${label}"><table>
<thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;

export interface ShowOptions {
  notice?: string;
  status?: number;
  error?: string;
  link?: Html;
}

/** The customer page's frame, handed to each tab module. */
export interface CustomerShell {
  load: (
    req: Request,
    res: Response,
  ) => Promise<Awaited<ReturnType<AdminDeps["clients"]["auth"]["getCustomer"]>> | undefined>;
  show: (res: Response, c: Customer, tab: Tab, content: Html, o?: ShowOptions) => void;
  done: (req: Request) => string | undefined;
  back: (res: Response, id: string, tab: Tab, word: string) => void;
}

export function customerShell(router: Router, d: AdminDeps): CustomerShell {
  const { clients, render } = d;
  const notFound = (res: Response) =>
    render(
      res,
      "Customer not found",
      html`<p>No such customer. <a href="/admin/customers">Back to Customers</a></p>`,
      { status: 404, current: CURRENT },
    );
  // A path that names no customer is a 404 before any call is made, so a tab's calls, made side
  // by side, never see a malformed id.
  router.use("/customers/:id", (req, res, next) => (isUuid(String(req.params.id)) ? next() : notFound(res)));

  return {
    /** The customer and its people, or a 404 page (undefined) for an id that names none. */
    async load(req, res) {
      try {
        return await clients.auth.getCustomer({ customerId: String(req.params.id) });
      } catch (err) {
        if (resolveError(err).status >= 500) throw err;
        notFound(res);
        return undefined;
      }
    },
    show(res, c, tab, content, o = {}) {
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
    },
    done: (req) => (typeof req.query.done === "string" ? DONE[req.query.done] : undefined),
    back: (res, id, tab, w) => res.redirect(303, `/admin/customers/${id}${tab ? `/${tab}` : ""}?done=${w}`),
  };
}
