import type { Router } from "express";
import { PORTAL_CONSOLE_SOCKET_PATH } from "../../../console/socket.ts";
import { CONSOLE_ASSETS } from "../../console-assets.ts";
import { html } from "../../html.ts";
import { sessionOf } from "../../session.ts";
import { action, doneOf, type Kit, page } from "../kit.ts";
import { may } from "../page-table.ts";
import { buttonForm } from "../ui.ts";
import { ACT, back, detailOf, nameOf, notYours, serviceTabs, svcBase } from "./table.ts";

const TICKET = /^hbct_[A-Za-z0-9_-]{43}$/;

/**
 * A VPS's web console (issue 29 §4): the page asks the API for a console ticket (the form, so the
 * table's permission and one-time token apply), comes back with it, and the terminal (console.js,
 * xterm.js) opens the console's WebSocket with it and the person's session.
 */
export function consoleRoutes(kit: Kit, router: Router): void {
  page(kit, router, "/services/:id/console", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    const base = svcBase(s.id);
    const tabs = serviceTabs(res, s, `${base}/console`);
    if (s.kind !== "vps") {
      return kit.render(
        res,
        `Console: ${nameOf(s)}`,
        html`${tabs}<p class="empty">Only a VPS has a web console.</p>`,
        {
          status: 404,
        },
      );
    }
    if (!may(sessionOf(res), ACT.console)) {
      return kit.render(res, `Console: ${nameOf(s)}`, html`${tabs}${notYours("The console")}`);
    }
    const done = await doneOf(kit, req, res);
    const ticket =
      typeof req.query.ticket === "string" && TICKET.test(req.query.ticket) ? req.query.ticket : "";
    const open = buttonForm(
      `${base}/console`,
      ticket ? "Open the console again" : "Open the console",
      sessionOf(res).csrfToken,
    );
    if (!ticket) {
      return kit.render(
        res,
        `Console: ${nameOf(s)}`,
        html`${tabs}
<p>The console is a terminal on the machine's login prompt: sign in as <code>root</code> with the root password (<a href="${base}/password">Root password</a> sets it). It works while the VPS is running, and closes when you sign out or the service is suspended.</p>
${open}`,
        done,
      );
    }
    kit.render(
      res,
      `Console: ${nameOf(s)}`,
      html`${tabs}
<p id="console-status" role="status">Connecting… (the console needs JavaScript)</p>
<div id="console" class="console" data-socket="${PORTAL_CONSOLE_SOCKET_PATH}?ticket=${ticket}"></div>
${open}`,
      { ...done, assets: CONSOLE_ASSETS },
    );
  });

  action(kit, router, ACT.console, { back }, async (req, _res, api) => {
    const r = await api<{ ticket: string }>(ACT.console.ops[0], { params: { id: String(req.params.id) } });
    return { location: `${back(req)}/console?ticket=${r.data.ticket}` };
  });
}
