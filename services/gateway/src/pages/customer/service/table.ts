import type { Request, Response } from "express";
import type { z } from "zod";
import type { serviceDetail } from "../../../wire/service.ts";
import { type Html, html } from "../../html.ts";
import { sessionOf } from "../../session.ts";
import { operation, type PageApi, Refused } from "../api.ts";
import { may, type PageAction, pageAction } from "../page-table.ts";

export type ServiceDetail = z.infer<typeof serviceDetail>;
export type Kind = "vps" | "dedicated" | "other";

// The operations the service pages offer, by the route table's own method and path.
export const OPS = {
  list: operation("GET", "/services", "/portal/services"),
  listVps: operation("GET", "/vps", "/portal/services?kind=vps"),
  listDedicated: operation("GET", "/dedicated", "/portal/services?kind=dedicated"),
  detail: operation("GET", "/services/:id", "/portal/services/:id"),
  vpsDetail: operation("GET", "/vps/:id", "/portal/services/:id"),
  dedicatedDetail: operation("GET", "/dedicated/:id", "/portal/services/:id"),
  actions: operation("GET", "/services/:id/actions", "/portal/services/:id"),
  stats: operation("GET", "/services/:id/stats", "/portal/services/:id"),
  vpsStats: operation("GET", "/vps/:id/stats", "/portal/services/:id"),
  dedicatedStats: operation("GET", "/dedicated/:id/stats", "/portal/services/:id"),
  vpsIps: operation("GET", "/vps/:id/ips", "/portal/services/:id"),
  dedicatedIps: operation("GET", "/dedicated/:id/ips", "/portal/services/:id"),
  dedicatedPowerStatus: operation("GET", "/dedicated/:id/power-status", "/portal/services/:id"),
  dedicatedTraffic: operation("GET", "/dedicated/:id/traffic", "/portal/services/:id"),
  dedicatedProvision: operation("GET", "/dedicated/:id/provision-status", "/portal/services/:id"),
  game: operation("GET", "/services/:id/game", "/portal/services/:id"),
  vpsPower: operation("POST", "/vps/:id/power/:action", "/portal/services/:id (power buttons)"),
  dedicatedPower: operation("POST", "/dedicated/:id/power", "/portal/services/:id (power buttons)"),
  power: operation("POST", "/services/:id/power/:action", "/portal/services/:id (power buttons)"),
  runAction: operation("POST", "/services/:id/actions/:action", "/portal/services/:id (action buttons)"),
  gamePower: operation("POST", "/services/:id/game/power/:action", "/portal/services/:id (game server)"),
  vpsImages: operation("GET", "/vps/:id/os-images", "/portal/services/:id/reinstall"),
  dedicatedImages: operation("GET", "/dedicated/:id/os-images", "/portal/services/:id/reinstall"),
  vpsReinstall: operation("POST", "/vps/:id/reinstall", "/portal/services/:id/reinstall"),
  dedicatedReinstall: operation("POST", "/dedicated/:id/reinstall", "/portal/services/:id/reinstall"),
  reinstall: operation("POST", "/services/:id/reinstall", "/portal/services/:id/reinstall"),
  vpsPassword: operation("POST", "/vps/:id/password", "/portal/services/:id/password"),
  dedicatedPassword: operation("POST", "/dedicated/:id/password", "/portal/services/:id/password"),
  password: operation("POST", "/services/:id/password", "/portal/services/:id/password"),
  vpsConsole: operation("POST", "/vps/:id/console", "/portal/services/:id/console"),
  snapshots: operation("GET", "/vps/:id/snapshots", "/portal/services/:id/copies"),
  snapshot: operation("POST", "/vps/:id/snapshots", "/portal/services/:id/copies"),
  revert: operation("POST", "/vps/:id/snapshots/:copyId/revert", "/portal/services/:id/copies"),
  deleteSnapshot: operation("DELETE", "/vps/:id/snapshots/:copyId", "/portal/services/:id/copies"),
  backups: operation("GET", "/services/:id/backups", "/portal/services/:id/copies"),
  backup: operation("POST", "/services/:id/backups", "/portal/services/:id/copies"),
  restore: operation("POST", "/services/:id/backups/:copyId/restore", "/portal/services/:id/copies"),
  cancel: operation("POST", "/services/:id/cancel", "/portal/services/:id/cancel"),
  cancelVps: operation("DELETE", "/vps/:id", "/portal/services/:id/cancel"),
  withdraw: operation("DELETE", "/services/:id/cancel", "/portal/services/:id (withdraw cancellation)"),
  renew: operation("POST", "/services/:id/renew", "/portal/services/:id (renew now)"),
  addons: operation("GET", "/services/:id/options", "/portal/services/:id/addons"),
  addonOffers: operation("GET", "/services/:id/options/available", "/portal/services/:id/addons"),
  buyAddon: operation("POST", "/services/:id/options", "/portal/services/:id/addons"),
  giveUpAddon: operation("DELETE", "/services/:id/options/:optionId", "/portal/services/:id/addons"),
  upgrades: operation("GET", "/services/:id/upgrades", "/portal/services/:id/upgrades"),
  requestUpgrade: operation("POST", "/services/:id/upgrades", "/portal/services/:id/upgrades"),
  optionChange: operation("POST", "/services/:id/upgrades/options", "/portal/services/:id/upgrades"),
  upgrade: operation("GET", "/upgrades/:id", "/portal/upgrades/:id"),
  cancelUpgrade: operation("POST", "/upgrades/:id/cancel", "/portal/upgrades/:id"),
};

const JOB = "the job's page (/portal/jobs/:id), else the service";
const SERVICE = "/portal/services/:id";
const COPIES = "/portal/services/:id/copies";

/** The service pages' actions: the form's path, the API operations it performs, where it lands. */
export const ACT = {
  power: pageAction({
    path: "/services/:id/power",
    ops: [OPS.vpsPower, OPS.dedicatedPower, OPS.power],
    redirect: JOB,
  }),
  runAction: pageAction({ path: "/services/:id/action", ops: [OPS.runAction], redirect: JOB }),
  gamePower: pageAction({ path: "/services/:id/game-power", ops: [OPS.gamePower], redirect: JOB }),
  renew: pageAction({ path: "/services/:id/renew", ops: [OPS.renew], redirect: SERVICE }),
  withdraw: pageAction({ path: "/services/:id/withdraw", ops: [OPS.withdraw], redirect: SERVICE }),
  reinstall: pageAction({
    path: "/services/:id/reinstall",
    ops: [OPS.vpsReinstall, OPS.dedicatedReinstall, OPS.reinstall],
    redirect: JOB,
  }),
  password: pageAction({
    path: "/services/:id/password",
    ops: [OPS.vpsPassword, OPS.dedicatedPassword, OPS.password],
    redirect: JOB,
  }),
  console: pageAction({
    path: "/services/:id/console",
    ops: [OPS.vpsConsole],
    redirect: "/portal/services/:id/console with the console's ticket (the terminal opens on it)",
  }),
  snapshot: pageAction({ path: "/services/:id/snapshots", ops: [OPS.snapshot], redirect: COPIES }),
  backup: pageAction({ path: "/services/:id/backups", ops: [OPS.backup], redirect: COPIES }),
  revert: pageAction({ path: "/services/:id/snapshots/:copyId/revert", ops: [OPS.revert], redirect: JOB }),
  deleteSnapshot: pageAction({
    path: "/services/:id/snapshots/:copyId/delete",
    ops: [OPS.deleteSnapshot],
    redirect: COPIES,
  }),
  restore: pageAction({ path: "/services/:id/backups/:copyId/restore", ops: [OPS.restore], redirect: JOB }),
  cancel: pageAction({ path: "/services/:id/cancel", ops: [OPS.cancelVps, OPS.cancel], redirect: SERVICE }),
  buyAddon: pageAction({
    path: "/services/:id/addons",
    ops: [OPS.buyAddon],
    redirect: "/portal/services/:id/addons",
  }),
  giveUpAddon: pageAction({
    path: "/services/:id/addons/:optionId/give-up",
    ops: [OPS.giveUpAddon],
    redirect: "/portal/services/:id/addons",
  }),
  requestUpgrade: pageAction({
    path: "/services/:id/upgrades",
    ops: [OPS.requestUpgrade],
    redirect: "/portal/upgrades/:id",
  }),
  optionChange: pageAction({
    path: "/services/:id/upgrades/options",
    ops: [OPS.optionChange],
    redirect: "/portal/upgrades/:id",
  }),
  cancelUpgrade: pageAction({
    path: "/upgrades/:id/cancel",
    ops: [OPS.cancelUpgrade],
    redirect: "/portal/upgrades/:id",
  }),
};

export const kindOf = (s: { kind: string }): Kind =>
  s.kind === "vps" ? "vps" : s.kind === "dedicated" ? "dedicated" : "other";

/** A read that may be refused (a machine not built yet): its value, or the refusal's message. */
export async function attempt<T>(p: Promise<{ data: T }>): Promise<{ value?: T; refused?: string }> {
  try {
    return { value: (await p).data };
  } catch (err) {
    if (err instanceof Refused) return { refused: err.message };
    throw err;
  }
}

export const svcBase = (id: string) => `/portal/services/${encodeURIComponent(id)}`;
/** The service page of the request's `:id`: where its actions go back to. */
export const back = (req: Request) => svcBase(String(req.params.id));
/** The service's name as a person reads it. */
export const nameOf = (s: ServiceDetail) => s.hostname || s.name || s.id;

export const detailOf = async (api: PageApi, id: string) =>
  (await api<ServiceDetail>(OPS.detail, { params: { id } })).data;

/** A power or control action accepted: its job's page, which follows it until it ends. */
export const toJob = (
  r: { data: { job_id?: string; completed?: boolean; state?: string } },
  what: string,
) => ({
  location: r.data.job_id ? `/portal/jobs/${r.data.job_id}` : "",
  notice: r.data.completed
    ? `${what}: done${r.data.state ? ` (${r.data.state})` : ""}.`
    : `${what} accepted; its job is shown below.`,
});

/**
 * The tabs of one service's pages. A tab whose page is one action's form shows only to a person
 * who may use that action (page-table.ts `may`).
 */
export function serviceTabs(res: Response, s: ServiceDetail, current: string): Html {
  const base = svcBase(s.id);
  const session = sessionOf(res);
  const tabs: [string, string, PageAction | undefined][] = [
    [base, "Overview", undefined],
    ...(s.kind === "vps" || s.kind === "dedicated" || s.machine
      ? ([
          [`${base}/reinstall`, "Reinstall", ACT.reinstall],
          [`${base}/password`, "Root password", ACT.password],
        ] as [string, string, PageAction][])
      : []),
    ...(s.kind === "vps"
      ? ([[`${base}/console`, "Console", ACT.console]] as [string, string, PageAction][])
      : []),
    [`${base}/copies`, s.kind === "vps" ? "Snapshots and backups" : "Backups", undefined],
    [`${base}/addons`, "Add-ons", undefined],
    [`${base}/upgrades`, "Upgrades", undefined],
    [`${base}/cancel`, "Cancel", ACT.cancel],
  ];
  return html`<nav aria-label="Service" class="tabs"><ul>${tabs
    .filter(([, , a]) => !a || may(session, a))
    .map(
      ([href, label]) =>
        html`<li><a href="${href}"${href === current ? html` aria-current="page"` : ""}>${label}</a></li>`,
    )}</ul></nav>`;
}

/** Said instead of an action's form on its own page when the person may not use it. */
export const notYours = (what: string) =>
  html`<p class="empty" id="not-permitted">${what} needs a permission you do not have on this account, or the account is suspended.</p>`;
