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

/** The menu's order (Order sits after Services, as it always has). */
const ORDER_OF_MENU = [
  "/portal/services",
  "/portal/order",
  "/portal/orders",
  "/portal/invoices",
  "/portal/proformas",
  "/portal/balance",
  "/portal/add-credit",
  "/portal/ssh-keys",
  "/portal/jobs",
  "/portal/keys",
  "/portal/team",
  "/portal/reseller",
  "/portal/reseller/orders",
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
): Router {
  const router = express.Router();
  signInRoutes(router, PORTAL, clients, setCookie);
  router.use(requireSession(PORTAL, clients));

  const apiEnabled = async () => (await clients.auth.getSettings({})).settings?.customerApiEnabled ?? false;

  const render: Render = (res, title, body, o) => {
    const s = sessionOf(res);
    // A menu entry shows when the person holds the permission of the API operation its page
    // lists (a hint only: the API decides each call).
    const areas: { href: string; label: string; needs: Permission }[] = [
      { href: "/portal/services", label: "Services", needs: "view_services" },
      { href: "/portal/orders", label: "Orders", needs: "view_invoices" },
      { href: "/portal/invoices", label: "Invoices", needs: "view_invoices" },
      { href: "/portal/proformas", label: "Proformas", needs: "view_invoices" },
      { href: "/portal/balance", label: "Balance", needs: "view_billing" },
      { href: "/portal/add-credit", label: "Add credit", needs: "pay_invoices" },
      { href: "/portal/ssh-keys", label: "SSH keys", needs: "view_services" },
      { href: "/portal/jobs", label: "Jobs", needs: "view_services" },
    ];
    const nav = [
      ...areas.filter((a) => holdsAny(s.permissions, [a.needs])).map(({ href, label }) => ({ href, label })),
      // Order and Team are drawn for a person who may use their forms (page-table.ts).
      ...(may(s, ORDER) ? [{ href: "/portal/order", label: "Order" }] : []),
      ...(o.nav ? [{ href: "/portal/keys", label: "API Keys" }] : []),
      ...(s.isOwner
        ? [
            { href: "/portal/team", label: "Team" },
            { href: "/portal/reseller", label: "Reseller" },
          ]
        : // A partner's other people with View Services reach the reseller panel, as the signed
          // routes would let them (the owner's Reseller page holds the programme's settings).
          s.partnerStatus && holdsAny(s.permissions, ["view_services"])
          ? [{ href: "/portal/reseller/orders", label: "Reseller" }]
          : []),
    ];
    nav.sort((a, b) => ORDER_OF_MENU.indexOf(a.href) - ORDER_OF_MENU.indexOf(b.href));
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
      }),
      o.status,
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
  resellerStreamRoutes(kit, router, clients.webhooks);
  cartRoutes(kit, router);
  keyRoutes(router, clients, render, api, apiEnabled);
  teamRoutes(router, clients, render, publicUrl);
  resellerRoutes(router, clients, render);
  return router;
}
