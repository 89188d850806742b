import type { Session } from "@hb/contracts/hb/auth/v1/portal_pb";
import { holdsAny, type Permission } from "@hb/platform";
import express, { type Router } from "express";
import type { PageClients } from "../clients.ts";
import { billingRoutes } from "./customer/billing.ts";
import { cartRoutes } from "./customer/cart.ts";
import { keyRoutes } from "./customer/keys.ts";
import type { Kit } from "./customer/kit.ts";
import { machineRoutes } from "./customer/machines.ts";
import { ORDER } from "./customer/orders.ts";
import { may, suspended } from "./customer/page-table.ts";
import { resellerPanelRoutes } from "./customer/reseller-panel.ts";
import { resellerStreamRoutes } from "./customer/reseller-stream.ts";
import { serviceRoutes } from "./customer/services.ts";
import { type Render, teamRoutes } from "./customer/team.ts";
import { topUpRoutes } from "./customer/top-up.ts";
import { html } from "./html.ts";
import { page } from "./layout.ts";
import { resellerRoutes } from "./reseller.ts";
import { sendPage } from "./respond.ts";
import { type CookieWriter, PORTAL, requireSession, sessionOf } from "./session.ts";
import { signInRoutes } from "./sign-in.ts";

const holds = (p: Permission) => (s: Session) => holdsAny(s.permissions, [p]);

/**
 * The menu, in its order. An entry shows when the person may use what it leads to: the permission
 * of the API operation its page lists, or the page table's own answer (a hint only: the API decides
 * each call). API Keys shows while the Customer API is on.
 */
const MENU: { href: string; label: string; shows: (s: Session, apiOn: boolean) => boolean }[] = [
  { href: "/portal/services", label: "Services", shows: holds("view_services") },
  { href: "/portal/order", label: "Order", shows: (s) => may(s, ORDER) },
  { href: "/portal/orders", label: "Orders", shows: holds("view_invoices") },
  { href: "/portal/invoices", label: "Invoices", shows: holds("view_invoices") },
  { href: "/portal/proformas", label: "Proformas", shows: holds("view_invoices") },
  { href: "/portal/balance", label: "Balance", shows: holds("view_billing") },
  { href: "/portal/add-credit", label: "Add credit", shows: holds("pay_invoices") },
  { href: "/portal/ssh-keys", label: "SSH keys", shows: holds("view_services") },
  { href: "/portal/jobs", label: "Jobs", shows: holds("view_services") },
  { href: "/portal/keys", label: "API Keys", shows: (_s, apiOn) => apiOn },
  { href: "/portal/team", label: "Team", shows: (s) => s.isOwner },
  { href: "/portal/reseller", label: "Reseller", shows: (s) => s.isOwner },
  // A partner's other people with View Services reach the reseller panel, as the signed routes
  // would let them (the owner's Reseller page holds the programme's settings).
  {
    href: "/portal/reseller/orders",
    label: "Reseller",
    shows: (s) => !s.isOwner && Boolean(s.partnerStatus) && holdsAny(s.permissions, ["view_services"]),
  },
];

/** Said on every page of a suspended account, before any form is tried. */
const SUSPENDED_BANNER = html`<strong>This account is suspended.</strong> You can read everything here, but nothing can be ordered, changed or paid until it is reactivated; contact support.`;

/**
 * The client portal: the customer's operations (services, orders, invoices and proformas, balance,
 * SSH keys, jobs) through the API in process, and the account pages (API Keys while the Customer
 * API is on, Team, Reseller) through auth.
 */
export function portalRouter(
  clients: PageClients,
  setCookie: CookieWriter,
  publicUrl: string,
  api: Pick<Kit, "call" | "once" | "cooldown">,
  sessionCheckMs: number,
): Router {
  const router = express.Router();
  signInRoutes(router, PORTAL, clients, setCookie);
  router.use(requireSession(PORTAL, clients));

  const apiEnabled = async () => (await clients.auth.getSettings({})).settings?.customerApiEnabled ?? false;

  const render: Render = (res, title, body, o) => {
    const s = sessionOf(res);
    const nav = MENU.filter((m) => m.shows(s, o.nav)).map(({ href, label }) => ({ href, label }));
    sendPage(
      res,
      page({
        title,
        area: PORTAL.name,
        body,
        nav,
        current: res.locals.current as string | undefined,
        notice: o.notice,
        error: o.error,
        banner: suspended(s) ? SUSPENDED_BANNER : undefined,
        user: { name: s.name, signOut: "/portal/sign-out", csrf: s.csrfToken },
        assets: o.assets,
      }),
      o.status,
      o.assets !== undefined,
    );
  };

  router.get("/", (_req, res) => {
    const held = sessionOf(res).permissions;
    res.redirect(
      303,
      holdsAny(held, ["view_services"])
        ? "/portal/services"
        : holdsAny(held, ["view_invoices"])
          ? "/portal/invoices"
          : "/portal/team",
    );
  });

  // The customer's operations: each page calls the API in process as the signed-in person.
  const kit: Kit = {
    ...api,
    render: (res, title, body, o = {}) => render(res, title, body, { ...o, nav: res.locals.apiOn === true }),
  };
  router.use(async (req, res, next) => {
    // The menu marks the area a page belongs to (/portal/services/x is under Services), and shows
    // API Keys only while the Customer API is on.
    res.locals.current ??= `/portal/${req.path.split("/")[1] ?? ""}`;
    try {
      res.locals.apiOn = await apiEnabled();
      next();
    } catch (err) {
      next(err);
    }
  });
  serviceRoutes(kit, router);
  billingRoutes(kit, router);
  topUpRoutes(kit, router, clients.topUps, publicUrl);
  machineRoutes(kit, router);
  resellerPanelRoutes(kit, router);
  resellerStreamRoutes(kit, router, clients, sessionCheckMs);
  cartRoutes(kit, router);
  keyRoutes(router, clients, render, api, apiEnabled);
  teamRoutes(router, clients, render, publicUrl, api.once);
  resellerRoutes(router, clients, render);
  return router;
}
