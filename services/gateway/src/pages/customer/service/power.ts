import type { Response, Router } from "express";
import { type Html, html } from "../../html.ts";
import { sessionOf } from "../../session.ts";
import { action, bodyText, type Kit, page } from "../kit.ts";
import { may } from "../page-table.ts";
import { buttonForm, formTokens } from "../ui.ts";
import {
  ACT,
  back,
  detailOf,
  type Kind,
  kindOf,
  nameOf,
  notYours,
  OPS,
  type ServiceDetail,
  serviceTabs,
  svcBase,
  toJob,
} from "./table.ts";

/** The power actions of a machine by its state: nothing that would do nothing, nothing to a wreck. */
const VPS_POWER: Record<string, string[]> = {
  running: ["reboot", "shutdown", "stop", "poweroff"],
  stopped: ["start"],
  paused: ["start", "stop", "poweroff"],
};
const DEDICATED_POWER: Record<string, string[]> = { on: ["restart", "off"], off: ["on"] };
const OTHER_POWER = ["start", "stop", "restart", "reboot", "shutdown", "poweroff"];
const GAME_POWER = ["start", "restart", "stop", "kill"];
/** Actions that cut a machine off: each asks first, naming the machine (issue 29 §2). */
const DESTRUCTIVE = new Set(["stop", "poweroff", "off", "kill"]);
/** Only a running service takes power actions (a failed build or an ended service takes none). */
const POWERED = new Set(["active"]);

/**
 * The power buttons a service's page draws: the actions its machine's state allows, only for a
 * person who may use them; a destructive one is a link to its question rather than a button.
 */
export function powerNames(
  s: ServiceDetail,
  kind: Kind,
  o: { actions?: readonly string[]; power?: string },
): string[] {
  if (!POWERED.has(s.status)) return [];
  if (kind === "vps") return VPS_POWER[s.machine?.state ?? ""] ?? [];
  if (kind === "dedicated") return DEDICATED_POWER[o.power ?? ""] ?? ["on", "restart", "off"];
  return (o.actions ?? []).filter((a) => OTHER_POWER.includes(a));
}

function control(res: Response, s: ServiceDetail, act: string, game = false): Html {
  const base = svcBase(s.id);
  const label = game ? `Game server: ${act}` : undefined;
  if (DESTRUCTIVE.has(act)) {
    const href = `${base}/${game ? "game-power" : "power"}/${act}`;
    return html`<a class="button danger" href="${href}"${label ? html` aria-label="${label}"` : ""}>${act}</a>`;
  }
  return buttonForm(`${base}/${game ? "game-power" : "power"}`, act, sessionOf(res).csrfToken, {
    fields: { action: act },
    ...(label ? { aria: label } : {}),
  });
}

/** The Power section of a service's page (and its game server's buttons). */
export function powerSection(
  res: Response,
  s: ServiceDetail,
  names: readonly string[],
  o: { refused?: string },
): Html {
  const session = sessionOf(res);
  if (!may(session, ACT.power)) {
    return html`<h2>Power</h2><p class="empty">Power actions need the power or manage permission, and an account that is not suspended.</p>`;
  }
  const why =
    s.status === "provisioning_failed"
      ? "This service failed to build; it takes no power actions."
      : !POWERED.has(s.status)
        ? `This service is ${s.status.replaceAll("_", " ")}; it takes no power actions.`
        : (o.refused ?? "This service takes no power actions right now.");
  return html`<h2>Power</h2>
${names.length ? html`<div class="actions">${names.map((a) => control(res, s, a))}</div>` : html`<p class="empty">${why}</p>`}`;
}

/** The game server's power buttons (kill asks first), for a running service and a person who may. */
export const gameButtons = (res: Response, s: ServiceDetail): Html | "" =>
  POWERED.has(s.status) && may(sessionOf(res), ACT.gamePower)
    ? html`<div class="actions">${GAME_POWER.map((a) => control(res, s, a, true))}</div>`
    : "";

export function powerRoutes(kit: Kit, router: Router): void {
  action(kit, router, ACT.power, { back }, async (req, _res, api, token) => {
    const id = String(req.params.id);
    const s = await detailOf(api, id);
    const act = bodyText(req, "action");
    const kind = kindOf(s);
    const r =
      kind === "vps"
        ? await api<{ job_id: string }>(OPS.vpsPower, { params: { id, action: act }, token })
        : kind === "dedicated"
          ? await api<{ job_id: string }>(OPS.dedicatedPower, {
              params: { id },
              body: { action: act },
              token,
            })
          : await api<{ job_id: string }>(OPS.power, { params: { id, action: act }, token });
    return toJob(r, `Power ${act}`);
  });
  action(kit, router, ACT.runAction, { back }, async (req, _res, api, token) => {
    const act = bodyText(req, "action");
    const r = await api<{ job_id?: string }>(OPS.runAction, {
      params: { id: String(req.params.id), action: act },
      body: {},
      token,
    });
    return { ...toJob(r, act), location: r.data.job_id ? `/portal/jobs/${r.data.job_id}` : back(req) };
  });
  action(kit, router, ACT.gamePower, { back }, async (req, _res, api, token) => {
    const act = bodyText(req, "action");
    return toJob(
      await api(OPS.gamePower, { params: { id: String(req.params.id), action: act }, token }),
      `Game server ${act}`,
    );
  });
  action(kit, router, ACT.renew, { back }, async (req, _res, api, token) => {
    await api(OPS.renew, { params: { id: String(req.params.id) }, token });
    return { location: back(req), notice: "The next invoice is issued; see Invoices." };
  });
  action(kit, router, ACT.withdraw, { back }, async (req, _res, api, token) => {
    await api(OPS.withdraw, { params: { id: String(req.params.id) }, token });
    return { location: back(req), notice: "The cancellation is withdrawn; the service renews as before." };
  });

  // A destructive power action asks first, naming the machine; its form posts the action itself.
  for (const [what, a] of [
    ["power", ACT.power],
    ["game-power", ACT.gamePower],
  ] as const) {
    page(kit, router, `/services/:id/${what}/:action`, async (req, res, api) => {
      const s = await detailOf(api, String(req.params.id));
      const act = String(req.params.action);
      const machine = nameOf(s);
      const effect =
        act === "kill"
          ? `The game server on ${machine} is killed at once: players are dropped and unsaved progress is lost.`
          : act === "stop" || act === "shutdown"
            ? `${machine} is stopped: everything running on it ends and it is unreachable until started again.`
            : `${machine} is powered off at once, like pulling the plug: unsaved data is lost and it is unreachable until started again.`;
      const body = !DESTRUCTIVE.has(act)
        ? html`<p class="empty">This action does not ask first; use its button on the service's page.</p>`
        : !may(sessionOf(res), a)
          ? notYours("This action")
          : html`<p class="warning"><strong>${effect}</strong></p>
<form method="post" action="${svcBase(s.id)}/${what}">${formTokens(sessionOf(res).csrfToken)}<input type="hidden" name="action" value="${act}">
<button type="submit" class="danger">Yes, ${act} ${machine}</button> <a href="${svcBase(s.id)}">Keep it running</a></form>`;
      kit.render(
        res,
        `${what === "game-power" ? "Game server" : "Power"} ${act}: ${machine}`,
        html`${serviceTabs(res, s, "")}${body}`,
      );
    });
  }
}
