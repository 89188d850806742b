import { PAGE_SIZE } from "@hb/platform/paging";
import type { Request, Response, Router } from "express";
import type { z } from "zod";
import type { addonList, availableAddonList } from "../../wire/addon.ts";
import type { backupList, snapshotList } from "../../wire/copy.ts";
import type { addressList, machineStats, osImages, provisionStatus } from "../../wire/machine.ts";
import type { serviceDetail, serviceList } from "../../wire/service.ts";
import type { gameDetail, serviceActions } from "../../wire/service-control.ts";
import type { upgrade, upgradePaths } from "../../wire/upgrade.ts";
import { field } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { sessionOf } from "../session.ts";
import { operation, type PageApi, Refused } from "./api.ts";
import { action, bodyText, doneOf, fieldErrors, type Kit, page } from "./kit.ts";
import { provisionWords } from "./machine-words.ts";
import { at, badge, buttonForm, facts, formTokens, money, pageParam, pager, table } from "./ui.ts";
import { usageSection } from "./usage-chart.ts";

type ServiceDetail = z.infer<typeof serviceDetail>;
type Kind = "vps" | "dedicated" | "other";

// The operations these pages offer, by the route table's own method and path.
const OPS = {
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

const kindOf = (s: { kind: string }): Kind =>
  s.kind === "vps" ? "vps" : s.kind === "dedicated" ? "dedicated" : "other";
const POWER: Record<Kind, string[]> = {
  vps: ["start", "reboot", "shutdown", "stop", "poweroff"],
  dedicated: ["on", "restart", "off"],
  other: [],
};
const GAME_POWER = ["start", "restart", "stop", "kill"];
const SERVICE_STATUSES = [
  "active",
  "pending_payment",
  "pending",
  "installing",
  "provisioning_failed",
  "suspended",
  "cancelled",
  "terminated",
];

/** A read that may be refused (a machine not built yet): its value, or the refusal's message. */
async function attempt<T>(p: Promise<{ data: T }>): Promise<{ value?: T; refused?: string }> {
  try {
    return { value: (await p).data };
  } catch (err) {
    if (err instanceof Refused) return { refused: err.message };
    throw err;
  }
}

const svcBase = (id: string) => `/portal/services/${encodeURIComponent(id)}`;

/** The tabs of one service's pages. */
function serviceTabs(s: ServiceDetail, current: string): Html {
  const base = svcBase(s.id);
  const tabs: [string, string][] = [
    [base, "Overview"],
    ...(s.kind === "vps" || s.kind === "dedicated" || s.machine
      ? ([
          [`${base}/reinstall`, "Reinstall"],
          [`${base}/password`, "Root password"],
        ] as [string, string][])
      : []),
    ...(s.kind === "vps"
      ? ([[`${base}/copies`, "Snapshots and backups"]] as [string, string][])
      : ([[`${base}/copies`, "Backups"]] as [string, string][])),
    [`${base}/addons`, "Add-ons"],
    [`${base}/upgrades`, "Upgrades"],
    [`${base}/cancel`, "Cancel"],
  ];
  return html`<nav aria-label="Service" class="tabs"><ul>${tabs.map(
    ([href, label]) =>
      html`<li><a href="${href}"${href === current ? html` aria-current="page"` : ""}>${label}</a></li>`,
  )}</ul></nav>`;
}

export function serviceRoutes(kit: Kit, router: Router): void {
  const detailOf = async (api: PageApi, id: string) =>
    (await api<ServiceDetail>(OPS.detail, { params: { id } })).data;

  page(kit, router, "/services", async (req, res, api) => {
    const kind = req.query.kind === "vps" || req.query.kind === "dedicated" ? req.query.kind : "";
    const status =
      typeof req.query.status === "string" && SERVICE_STATUSES.includes(req.query.status)
        ? req.query.status
        : "";
    const n = pageParam(req.query.page);
    type Row = {
      id: string;
      name: string;
      hostname: string;
      kind: string;
      status: string;
      billing?: { amount: string; currency: string; cycle: string; next_due_date: string };
    };
    let rows: Row[];
    let pagination: { page: number; limit: number; total: number } | undefined;
    if (kind) {
      const r = await api<Row[]>(kind === "vps" ? OPS.listVps : OPS.listDedicated, {
        query: { page: n, limit: PAGE_SIZE.default },
      });
      rows = r.data;
      pagination = r.pagination as typeof pagination;
    } else {
      const r = await api<z.infer<typeof serviceList>>(OPS.list, {
        query: { page: n, limit: PAGE_SIZE.default, status },
      });
      rows = r.data.services;
      pagination = r.data.pagination;
    }
    const filters = html`<form method="get" action="/portal/services" class="filters">
<div class="field"><label for="f-kind">Kind</label><select id="f-kind" name="kind">
${[
  ["", "All kinds"],
  ["vps", "VPS"],
  ["dedicated", "Dedicated servers"],
].map(([v, l]) => html`<option value="${v}"${v === kind ? html` selected` : ""}>${l}</option>`)}
</select></div>
<div class="field"><label for="f-status">Status</label><select id="f-status" name="status">
<option value="">Any status</option>
${SERVICE_STATUSES.map((v) => html`<option value="${v}"${v === status ? html` selected` : ""}>${v.replaceAll("_", " ")}</option>`)}
</select></div>
<button type="submit">Filter</button></form>
${kind && status ? html`<p class="hint">The status filter applies to the list of all kinds.</p>` : ""}`;
    const body = html`${filters}
${table(
  "Services",
  ["Name", "Hostname", "Kind", "Status", "Price", "Next due"],
  rows.map((s) => [
    html`<a href="${svcBase(s.id)}">${s.name || s.hostname || s.id}</a>`,
    s.hostname,
    s.kind,
    badge(s.status),
    s.billing ? money(s.billing.amount, s.billing.currency) + ` / ${s.billing.cycle}` : "—",
    s.billing ? at(s.billing.next_due_date).slice(0, 10) : "—",
  ]),
  kind || status
    ? "No service matches these filters."
    : "You have no services yet. Order one from the catalogue.",
)}
${pager("/portal/services", pagination, { ...(kind ? { kind } : {}), ...(status ? { status } : {}) })}
<p><a href="/portal/order">Order a new service</a></p>`;
    kit.render(res, "Services", body, await doneOf(kit, req, res));
  });

  page(kit, router, "/services/:id", async (req, res, api) => {
    const s = await detailOf(api, req.params.id as string);
    const id = s.id;
    const kind = kindOf(s);
    const csrf = sessionOf(res).csrfToken;
    const base = svcBase(id);
    type Read<T> = { value?: T; refused?: string };
    const none = <T>(): Promise<Read<T>> => Promise.resolve({});
    const [machine, stats, ips, actions, game, extra] = await Promise.all([
      kind === "vps"
        ? attempt(api<Record<string, unknown>>(OPS.vpsDetail, { params: { id } }))
        : kind === "dedicated"
          ? attempt(api<Record<string, unknown>>(OPS.dedicatedDetail, { params: { id } }))
          : none<Record<string, unknown>>(),
      attempt(
        api<z.infer<typeof machineStats>>(
          kind === "vps" ? OPS.vpsStats : kind === "dedicated" ? OPS.dedicatedStats : OPS.stats,
          { params: { id } },
        ),
      ),
      kind === "other"
        ? none<z.infer<typeof addressList>>()
        : attempt(
            api<z.infer<typeof addressList>>(kind === "vps" ? OPS.vpsIps : OPS.dedicatedIps, {
              params: { id },
            }),
          ),
      attempt(api<z.infer<typeof serviceActions>>(OPS.actions, { params: { id } })),
      s.kind === "game"
        ? attempt(api<z.infer<typeof gameDetail>>(OPS.game, { params: { id } }))
        : none<z.infer<typeof gameDetail>>(),
      kind === "dedicated"
        ? Promise.all([
            attempt(api<{ state: string; power: string }>(OPS.dedicatedPowerStatus, { params: { id } })),
            attempt(
              api<{ period: string; rx_bytes: number; tx_bytes: number }>(OPS.dedicatedTraffic, {
                params: { id },
              }),
            ),
            attempt(api<z.infer<typeof provisionStatus>>(OPS.dedicatedProvision, { params: { id } })),
          ])
        : Promise.resolve(undefined),
    ]);
    const powerNames =
      kind === "other"
        ? (actions.value?.actions ?? []).filter((a) =>
            ["start", "stop", "restart", "reboot", "shutdown", "poweroff"].includes(a),
          )
        : POWER[kind];
    const otherActions =
      kind === "other"
        ? (actions.value?.actions ?? []).filter(
            (a) => !powerNames.includes(a) && a !== "status" && a !== "stats",
          )
        : [];
    const st = stats.value;
    const body = html`${serviceTabs(s, base)}
${facts([
  ["Status", badge(s.status)],
  ["Kind", s.kind],
  ["Product", s.product.name],
  ["Hostname", s.hostname],
  ["Price", `${money(s.billing.amount, s.billing.currency)} / ${s.billing.cycle}`],
  ["Next due", at(s.billing.next_due_date)],
  ["Created", at(s.created_at)],
  [
    "Machine",
    s.machine
      ? `${s.machine.state ?? "not built"} · ${s.machine.primary_ip || "no address"} · ${s.machine.location}`
      : "none yet",
  ],
  ["Failure", s.failure_reason ?? undefined],
  [
    "Cancellation",
    s.cancellation ? `at the end of the term (${at(s.cancellation.effective_at)})` : undefined,
  ],
  ["Backend", actions.value?.backend],
])}
${s.status === "provisioning_failed" ? html`<p class="error" role="alert">This service failed to build: ${s.failure_reason ?? "no reason recorded"}. Power actions are not available; contact support or cancel it.</p>` : ""}
<h2>Power</h2>
${
  powerNames.length
    ? html`<div class="actions">${powerNames.map((a) =>
        buttonForm(`${base}/power`, a, csrf, {
          fields: { action: a },
          danger: a === "poweroff" || a === "off" || a === "stop",
        }),
      )}</div>`
    : html`<p class="empty">${actions.refused ?? "This service takes no power actions right now."}</p>`
}
${otherActions.length ? html`<h2>Other actions</h2><div class="actions">${otherActions.map((a) => buttonForm(`${base}/action`, a, csrf, { fields: { action: a } }))}</div>` : ""}
${
  game.value
    ? html`<h2>Game server</h2>${facts([
        ["Game", game.value.game],
        ["State", game.value.state],
        ["Players", `${game.value.players.online} of ${game.value.players.max}`],
        ["Address", game.value.address],
      ])}<div class="actions">${GAME_POWER.map((a) => buttonForm(`${base}/game-power`, a, csrf, { fields: { action: a }, aria: `Game server: ${a}` }))}</div>`
    : ""
}
<h2>Usage</h2>
${
  st
    ? facts([
        ["State", st.state],
        ["Processor", `${st.cpu.vcpus} vCPU, ${st.cpu.usage_percent}% used`],
        ["Memory", `${st.memory.used_mb} of ${st.memory.total_mb} MB`],
        ["Disk", `${st.disk.used_gb} of ${st.disk.total_gb} GB`],
        ["Network", `${st.network.rx_bytes} bytes in, ${st.network.tx_bytes} bytes out`],
      ])
    : html`<p class="empty">${stats.refused ?? "No figures yet."}</p>`
}
${st ? await usageSection(api, kind === "vps" ? OPS.vpsStats : kind === "dedicated" ? OPS.dedicatedStats : OPS.stats, id, req.query.range) : ""}
${
  ips.value
    ? html`<h2>Addresses</h2>${table(
        "Addresses",
        ["Address", "Version", "Purpose"],
        ips.value.ip_addresses.map((a) => [`${a.address}/${a.prefix_length}`, `IPv${a.version}`, a.purpose]),
        "No address assigned yet.",
      )}`
    : ""
}
${
  extra
    ? html`<h2>Server state</h2>${facts([
        ["Power", extra[0].value ? `${extra[0].value.power} (${extra[0].value.state})` : extra[0].refused],
        [
          "Traffic this month",
          extra[1].value
            ? `${extra[1].value.rx_bytes} bytes in, ${extra[1].value.tx_bytes} bytes out (${extra[1].value.period})`
            : extra[1].refused,
        ],
        ["Provisioning", extra[2].value ? provisionWords(extra[2].value) : extra[2].refused],
      ])}`
    : ""
}
${machine.value ? html`<details><summary>Machine detail</summary><pre>${JSON.stringify(machine.value, null, 2)}</pre></details>` : ""}
<h2>Billing</h2>
<div class="actions">${buttonForm(`${base}/renew`, "Renew now (bring the next invoice forward)", csrf)}
${s.cancellation ? buttonForm(`${base}/withdraw`, "Withdraw the cancellation", csrf) : ""}</div>`;
    kit.render(res, s.name || s.hostname || "Service", body, await doneOf(kit, req, res));
  });

  const back = (req: Request) => svcBase(String(req.params.id));
  /** A power or control action accepted: its job's page, which follows it until it ends. */
  const toJob = (r: { data: { job_id?: string; completed?: boolean; state?: string } }, what: string) => ({
    location: r.data.job_id ? `/portal/jobs/${r.data.job_id}` : "",
    notice: r.data.completed
      ? `${what}: done${r.data.state ? ` (${r.data.state})` : ""}.`
      : `${what} accepted; its job is shown below.`,
  });

  action(kit, router, "/services/:id/power", { back }, async (req, _res, api, token) => {
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
  action(kit, router, "/services/:id/action", { back }, async (req, _res, api, token) => {
    const act = bodyText(req, "action");
    const r = await api<{ job_id?: string }>(OPS.runAction, {
      params: { id: String(req.params.id), action: act },
      body: {},
      token,
    });
    return { ...toJob(r, act), location: r.data.job_id ? `/portal/jobs/${r.data.job_id}` : back(req) };
  });
  action(kit, router, "/services/:id/game-power", { back }, async (req, _res, api, token) => {
    const act = bodyText(req, "action");
    return toJob(
      await api(OPS.gamePower, { params: { id: String(req.params.id), action: act }, token }),
      `Game server ${act}`,
    );
  });
  action(kit, router, "/services/:id/renew", { back }, async (req, _res, api, token) => {
    await api(OPS.renew, { params: { id: String(req.params.id) }, token });
    return { location: back(req), notice: "The next invoice is issued; see Invoices." };
  });
  action(kit, router, "/services/:id/withdraw", { back }, async (req, _res, api, token) => {
    await api(OPS.withdraw, { params: { id: String(req.params.id) }, token });
    return { location: back(req), notice: "The cancellation is withdrawn; the service renews as before." };
  });

  // Reinstall: the image chooser and the password, with the warning; the form is the confirmation.
  async function reinstallPage(
    req: Request,
    res: Response,
    api: PageApi,
    f: { values: Record<string, string>; errors: Record<string, string>; general?: string },
    status = 200,
  ) {
    const s = await detailOf(api, String(req.params.id));
    const kind = kindOf(s);
    const images =
      kind === "other"
        ? { value: { images: [] as { id: string; name: string }[] } }
        : await attempt(
            api<z.infer<typeof osImages>>(kind === "vps" ? OPS.vpsImages : OPS.dedicatedImages, {
              params: { id: s.id },
            }),
          );
    const list = images.value?.images ?? [];
    const chosen = f.values.image ?? "";
    const csrf = sessionOf(res).csrfToken;
    const body = html`${serviceTabs(s, `${svcBase(s.id)}/reinstall`)}
<p class="warning"><strong>Reinstalling erases the disk.</strong> Everything on ${s.hostname || s.name} is lost; the machine is rebuilt from the image you choose.</p>
${f.general ? html`<p class="error" role="alert" id="form-error">${f.general}</p>` : ""}
<form method="post" action="${svcBase(s.id)}/reinstall" novalidate>
${formTokens(csrf)}
<fieldset class="field${f.errors.image ? " invalid" : ""}"><legend>Operating system image</legend>
${
  list.length
    ? list.map(
        (i, n) =>
          html`<div><input type="radio" id="img-${n}" name="image" value="${i.id}"${chosen === i.id || (!chosen && n === 0) ? html` checked` : ""}${f.errors.image && n === 0 ? html` aria-invalid="true" aria-describedby="f-image-error"` : ""}> <label for="img-${n}">${i.name}</label></div>`,
      )
    : kind === "other"
      ? html`<div><label for="f-image">Image id</label><input id="f-image" name="image" value="${chosen}"></div>`
      : html`<p class="empty">${images.refused ?? "No image is enabled for this plan."}</p>`
}
${f.errors.image ? html`<p class="error" id="f-image-error">${f.errors.image}</p>` : ""}
</fieldset>
${kind === "dedicated" ? "" : field(f, "password", "New root password", { type: "password", autocomplete: "new-password", hint: "At least 8 characters." })}
<div class="field"><input type="checkbox" id="f-confirm" name="confirm" value="yes" required${f.errors.confirm ? html` aria-invalid="true" aria-describedby="f-confirm-error"` : ""}> <label for="f-confirm">I understand that every file on this machine is erased</label>
${f.errors.confirm ? html`<p class="error" id="f-confirm-error">${f.errors.confirm}</p>` : ""}</div>
<button type="submit" class="danger">Reinstall and erase the disk</button> <a href="${svcBase(s.id)}">Cancel</a>
</form>`;
    kit.render(res, `Reinstall ${s.hostname || s.name}`, body, { status });
  }
  page(kit, router, "/services/:id/reinstall", (req, res, api) =>
    reinstallPage(req, res, api, { values: {}, errors: {} }),
  );
  action(
    kit,
    router,
    "/services/:id/reinstall",
    {
      back,
      form: async (req, res, err, api) => {
        await reinstallPage(
          req,
          res,
          api,
          fieldErrors(
            err,
            { image: bodyText(req, "image") },
            { image_id: "image", osImageId: "image", password: "password" },
          ),
          err.status,
        );
        return true;
      },
    },
    async (req, res, api, token) => {
      const id = String(req.params.id);
      if (bodyText(req, "confirm") !== "yes") {
        throw new Refused(400, {
          success: false,
          code: "VALIDATION_ERROR",
          error: "Confirm the reinstall",
          details: [{ field: "confirm", message: "Tick the box to confirm that the disk is erased" }],
        });
      }
      const s = await detailOf(api, id);
      const kind = kindOf(s);
      const image = bodyText(req, "image");
      const password = bodyText(req, "password");
      const r =
        kind === "vps"
          ? await api<{ job_id: string }>(OPS.vpsReinstall, {
              params: { id },
              body: { image_id: image, password },
              token,
            })
          : kind === "dedicated"
            ? await api<{ job_id: string }>(OPS.dedicatedReinstall, {
                params: { id },
                body: { osImageId: image },
                token,
              })
            : await api<{ job_id: string }>(OPS.reinstall, {
                params: { id },
                body: { image_id: image, ...(password ? { password } : {}) },
                token,
              });
      void res;
      return toJob(r, "Reinstall");
    },
  );

  async function passwordPage(
    req: Request,
    res: Response,
    api: PageApi,
    f: { values: Record<string, string>; errors: Record<string, string>; general?: string },
    status = 200,
  ) {
    const s = await detailOf(api, String(req.params.id));
    const body = html`${serviceTabs(s, `${svcBase(s.id)}/password`)}
<p>Sets a new root password on ${s.hostname || s.name}. ${s.kind === "vps" ? "The machine must be running." : ""}</p>
${f.general ? html`<p class="error" role="alert" id="form-error">${f.general}</p>` : ""}
<form method="post" action="${svcBase(s.id)}/password" novalidate>
${formTokens(sessionOf(res).csrfToken)}
${field(f, "password", "New root password", { type: "password", required: true, autocomplete: "new-password", hint: "8 to 128 characters." })}
<button type="submit">Set the password</button> <a href="${svcBase(s.id)}">Cancel</a>
</form>`;
    kit.render(res, `Root password of ${s.hostname || s.name}`, body, { status });
  }
  page(kit, router, "/services/:id/password", (req, res, api) =>
    passwordPage(req, res, api, { values: {}, errors: {} }),
  );
  action(
    kit,
    router,
    "/services/:id/password",
    {
      back,
      form: async (req, res, err, api) => {
        await passwordPage(req, res, api, fieldErrors(err, {}), err.status);
        return true;
      },
    },
    async (req, _res, api, token) => {
      const id = String(req.params.id);
      const s = await detailOf(api, id);
      const kind = kindOf(s);
      const op =
        kind === "vps" ? OPS.vpsPassword : kind === "dedicated" ? OPS.dedicatedPassword : OPS.password;
      return toJob(
        await api<{ job_id: string }>(op, {
          params: { id },
          body: { password: bodyText(req, "password") },
          token,
        }),
        "Password reset",
      );
    },
  );

  // Snapshots (VPS) and backups (any service).
  page(kit, router, "/services/:id/copies", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    const id = s.id;
    const csrf = sessionOf(res).csrfToken;
    const base = svcBase(id);
    const [snaps, backs] = await Promise.all([
      s.kind === "vps"
        ? attempt(api<z.infer<typeof snapshotList>>(OPS.snapshots, { params: { id } }))
        : Promise.resolve(undefined),
      attempt(api<z.infer<typeof backupList>>(OPS.backups, { params: { id } })),
    ]);
    const body = html`${serviceTabs(s, `${base}/copies`)}
${
  snaps
    ? html`<h2>Snapshots</h2>
${
  snaps.value
    ? copiesTable(
        "Snapshots",
        snaps.value.snapshots,
        (c) =>
          html`<a href="${base}/snapshots/${c.id}/revert">Revert to it</a> · <a href="${base}/snapshots/${c.id}/delete">Delete</a>`,
      )
    : html`<p class="empty">${snaps.refused}</p>`
}
<form method="post" action="${base}/snapshots" class="inline-form">${formTokens(csrf)}
<div class="field"><label for="f-snap">Snapshot name</label><input id="f-snap" name="name" maxlength="100"></div>
<button type="submit">Take a snapshot</button></form>`
    : ""
}
<h2>Backups</h2>
${
  backs.value
    ? copiesTable(
        "Backups",
        backs.value.backups,
        (c) => html`<a href="${base}/backups/${c.id}/restore">Restore it</a>`,
      )
    : html`<p class="empty">${backs.refused}</p>`
}
<form method="post" action="${base}/backups" class="inline-form">${formTokens(csrf)}
<div class="field"><label for="f-backup">Backup name</label><input id="f-backup" name="name" maxlength="100"></div>
<button type="submit">Take a backup</button></form>`;
    kit.render(res, `Copies of ${s.hostname || s.name}`, body, await doneOf(kit, req, res));
  });
  const copies = (req: Request) => `${svcBase(String(req.params.id))}/copies`;
  const nameOf = (req: Request) => (bodyText(req, "name") ? { name: bodyText(req, "name") } : {});
  for (const [kind, op, what] of [
    ["snapshots", OPS.snapshot, "Snapshot"],
    ["backups", OPS.backup, "Backup"],
  ] as const) {
    action(kit, router, `/services/:id/${kind}`, { back: copies }, async (req, _res, api, token) => {
      const r = await api<{ job_id?: string }>(op, {
        params: { id: String(req.params.id) },
        body: nameOf(req),
        token,
      });
      return {
        location: copies(req),
        notice: `${what} started${r.data.job_id ? ` (job ${r.data.job_id})` : ""}.`,
      };
    });
  }

  /** A confirmation page: what will happen, and the one button that does it. */
  function confirm(path: string, o: { title: string; warning: string; button: string }) {
    page(kit, router, path, async (req, res, api) => {
      const s = await detailOf(api, String(req.params.id));
      kit.render(
        res,
        o.title,
        html`${serviceTabs(s, "")}<p class="warning"><strong>${o.warning}</strong></p>
<form method="post" action="${req.path.startsWith("/") ? `/portal${req.path}` : req.path}">${formTokens(sessionOf(res).csrfToken)}
<button type="submit" class="danger">${o.button}</button> <a href="${copies(req)}">Cancel</a></form>`,
      );
    });
  }
  confirm("/services/:id/snapshots/:copyId/revert", {
    title: "Revert to the snapshot",
    warning: "The disk goes back to the snapshot: everything written since is lost.",
    button: "Revert the disk",
  });
  confirm("/services/:id/snapshots/:copyId/delete", {
    title: "Delete the snapshot",
    warning: "The snapshot is deleted for good.",
    button: "Delete the snapshot",
  });
  confirm("/services/:id/backups/:copyId/restore", {
    title: "Restore the backup",
    warning: "The disk is replaced by the backup: everything written since is lost.",
    button: "Restore the backup",
  });
  const copyParams = (req: Request) => ({ id: String(req.params.id), copyId: String(req.params.copyId) });
  action(
    kit,
    router,
    "/services/:id/snapshots/:copyId/revert",
    { back: copies },
    async (req, _res, api, token) => {
      const r = await api<{ job_id?: string }>(OPS.revert, { params: copyParams(req), token });
      return r.data.job_id
        ? toJob(r as { data: { job_id: string } }, "Revert")
        : { location: copies(req), notice: "Revert started." };
    },
  );
  action(
    kit,
    router,
    "/services/:id/snapshots/:copyId/delete",
    { back: copies },
    async (req, _res, api, token) => {
      await api(OPS.deleteSnapshot, { params: copyParams(req), token });
      return { location: copies(req), notice: "The snapshot is deleted." };
    },
  );
  action(
    kit,
    router,
    "/services/:id/backups/:copyId/restore",
    { back: copies },
    async (req, _res, api, token) => {
      const r = await api<{ job_id?: string }>(OPS.restore, { params: copyParams(req), token });
      return r.data.job_id
        ? toJob(r as { data: { job_id: string } }, "Restore")
        : { location: copies(req), notice: "Restore started." };
    },
  );

  // Cancellation: at the end of the term, or now (terminates).
  page(kit, router, "/services/:id/cancel", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    const body = html`${serviceTabs(s, `${svcBase(s.id)}/cancel`)}
${s.cancellation ? html`<p class="notice">A cancellation is already scheduled for ${at(s.cancellation.effective_at)}.</p>` : ""}
<p class="warning"><strong>Cancelling ends the service.</strong> At the end of the term it stops renewing; cancelled at once, the machine and its disks are destroyed now.</p>
<form method="post" action="${svcBase(s.id)}/cancel" novalidate>
${formTokens(sessionOf(res).csrfToken)}
${field({ values: {}, errors: {} }, "reason", "Reason (optional)", { multiline: true })}
<fieldset class="field"><legend>When</legend>
<div><input type="radio" id="when-term" name="when" value="end_of_term" checked> <label for="when-term">At the end of the term (${at(s.billing.next_due_date)})</label></div>
<div><input type="radio" id="when-now" name="when" value="now"> <label for="when-now">Now: terminate and destroy the data</label></div>
</fieldset>
<button type="submit" class="danger">Cancel the service</button> <a href="${svcBase(s.id)}">Keep it</a>
</form>`;
    kit.render(res, `Cancel ${s.hostname || s.name}`, body);
  });
  action(kit, router, "/services/:id/cancel", { back }, async (req, _res, api, token) => {
    const id = String(req.params.id);
    const s = await detailOf(api, id);
    const body = { reason: bodyText(req, "reason"), immediate: bodyText(req, "when") === "now" };
    await api(s.kind === "vps" ? OPS.cancelVps : OPS.cancel, { params: { id }, body, token });
    return {
      location: back(req),
      notice: body.immediate
        ? "The service is terminated."
        : "The cancellation is scheduled for the end of the term.",
    };
  });

  // Add-ons: what the service has, what it can buy, buy and give up.
  page(kit, router, "/services/:id/addons", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    const id = s.id;
    const csrf = sessionOf(res).csrfToken;
    const [held, offers] = await Promise.all([
      api<z.infer<typeof addonList>>(OPS.addons, { params: { id } }),
      attempt(api<z.infer<typeof availableAddonList>>(OPS.addonOffers, { params: { id } })),
    ]);
    const offerRows = offers.value?.options ?? [];
    const cur = s.billing.currency;
    const cycle = s.billing.cycle;
    const body = html`${serviceTabs(s, `${svcBase(id)}/addons`)}
<h2>Add-ons of this service</h2>
${table(
  "Add-ons",
  ["Name", "Billing", "Quantity", "Amount", "Status", "Next due", ""],
  held.data.options.map((o) => [
    o.name,
    `${o.billing_type.replace("_", " ")}${o.billing_type === "recurring" ? ` (${o.billing_cycle})` : ""}`,
    String(o.quantity),
    money(o.amount, s.billing.currency),
    badge(o.status),
    at(o.next_due_date),
    html`<a href="${svcBase(id)}/addons/${o.option_id}/give-up">Give up</a>`,
  ]),
  "This service has no add-ons.",
)}
<h2>Buy an add-on</h2>
${
  offerRows.length
    ? html`<form method="post" action="${svcBase(id)}/addons" novalidate>${formTokens(csrf)}
<div class="field"><label for="f-option">Add-on</label><select id="f-option" name="optionId">${offerRows.map((o) => html`<option value="${o.id}">${o.name}${o.held ? " (held)" : ""}</option>`)}</select></div>
<div class="field"><label for="f-billing">Billing</label><select id="f-billing" name="billingType"><option value="recurring">Recurring, with the service's cycle</option><option value="one_time">One time</option></select></div>
<div class="field"><label for="f-qty">Quantity</label><input id="f-qty" name="quantity" type="number" min="1" max="100" value="1"></div>
<button type="submit">Buy the add-on</button></form>
${table(
  "Add-on prices",
  ["Add-on", `Recurring, per ${cycle} term`, "One time"],
  offerRows.map((o) => {
    const recurring = (o.prices.recurring as Record<string, number> | null)?.[cycle];
    return [
      `${o.name}${o.held ? " (held)" : ""}`,
      recurring === undefined ? "—" : money(recurring, cur),
      o.prices.one_time === null ? "—" : money(o.prices.one_time, cur),
    ];
  }),
  "",
)}`
    : html`<p class="empty">${offers.refused ?? "No add-on is offered for this service."}</p>`
}`;
    kit.render(res, `Add-ons of ${s.hostname || s.name}`, body, await doneOf(kit, req, res));
  });
  const addonsOf = (req: Request) => `${svcBase(String(req.params.id))}/addons`;
  action(kit, router, "/services/:id/addons", { back: addonsOf }, async (req, _res, api, token) => {
    // As typed: digits are the number the API reads; anything else goes as it is, for the API to
    // refuse in its words (parseInt would read "1e3" and "1.5" as 1).
    const typed = req.body?.quantity === undefined ? "1" : bodyText(req, "quantity").trim();
    const quantity = /^\d{1,9}$/.test(typed) ? Number(typed) : typed;
    const r = await api<{ settled: boolean; credit_balance: number }>(OPS.buyAddon, {
      params: { id: String(req.params.id) },
      body: {
        optionId: bodyText(req, "optionId"),
        billingType: bodyText(req, "billingType") || "recurring",
        quantity,
      },
      token,
    });
    return {
      location: addonsOf(req),
      notice: r.data.settled
        ? "The add-on is bought and paid from your credit."
        : "The add-on is ordered; pay its invoice to activate it.",
    };
  });
  page(kit, router, "/services/:id/addons/:optionId/give-up", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    kit.render(
      res,
      "Give up the add-on",
      html`${serviceTabs(s, "")}<p class="warning"><strong>The add-on ends now.</strong> The unused share of what you paid is returned to your credit.</p>
<form method="post" action="${addonsOf(req)}/${String(req.params.optionId)}/give-up">${formTokens(sessionOf(res).csrfToken)}
<button type="submit" class="danger">Give up the add-on</button> <a href="${addonsOf(req)}">Keep it</a></form>`,
    );
  });
  action(
    kit,
    router,
    "/services/:id/addons/:optionId/give-up",
    { back: addonsOf },
    async (req, res, api, token) => {
      const r = await api<{ credit: number }>(OPS.giveUpAddon, {
        params: { id: String(req.params.id), optionId: String(req.params.optionId) },
        token,
      });
      return {
        location: addonsOf(req),
        notice: `The add-on is given up; ${money(r.data.credit, sessionOf(res).currency)} returned to your credit.`,
      };
    },
  );

  // Upgrades: the quote (paths with prorated amounts), request, options change, cancel.
  page(kit, router, "/services/:id/upgrades", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    const id = s.id;
    const csrf = sessionOf(res).csrfToken;
    const q = await attempt(api<z.infer<typeof upgradePaths>>(OPS.upgrades, { params: { id } }));
    const held = await attempt(api<z.infer<typeof addonList>>(OPS.addons, { params: { id } }));
    const p = q.value;
    const body = html`${serviceTabs(s, `${svcBase(id)}/upgrades`)}
${p?.pending_upgrade ? html`<p class="notice">An upgrade is pending: <a href="/portal/upgrades/${p.pending_upgrade.id}">${p.pending_upgrade.status.replaceAll("_", " ")}</a>.</p>` : ""}
${p ? html`<p>Now: ${p.current.name}, ${money(p.current.amount, s.billing.currency)} / ${p.current.cycle}.</p>` : html`<p class="empty">${q.refused}</p>`}
<h2>Change the plan</h2>
${table(
  "Upgrade paths",
  ["Plan", "Price", "To pay now", ""],
  (p?.paths ?? []).map((u) => [
    u.name,
    `${money(u.price, s.billing.currency)} / ${u.cycle}`,
    money(u.prorated_amount, s.billing.currency),
    buttonForm(`${svcBase(id)}/upgrades`, "Request this upgrade", csrf, {
      fields: { toProductId: u.product_id },
      aria: `Upgrade to ${u.name}`,
    }),
  ]),
  "No other plan is available for this service.",
)}
${p?.paths.length ? html`<p class="hint" id="quote-holds">An upgrade you request is invoiced at the amount to pay now, and that price holds until it expires at the end of the current term (${at(p.paths[0].paid_until)}): paid by then, the invoice is charged exactly what it says. Unpaid by then, it expires and you can request the upgrade again at that day's price.</p>` : ""}
<h2>Change add-ons with the plan's proration</h2>
${
  held.value?.options.length
    ? html`<form method="post" action="${svcBase(id)}/upgrades/options">${formTokens(csrf)}
<fieldset class="field"><legend>Remove these add-ons</legend>${held.value.options.map((o, n) => html`<div><input type="checkbox" id="rm-${n}" name="removeOptions" value="${o.option_id}"> <label for="rm-${n}">${o.name}</label></div>`)}</fieldset>
<button type="submit">Request the change</button></form>`
    : html`<p class="empty">No add-on to change; buy one on the Add-ons tab.</p>`
}`;
    kit.render(res, `Upgrades of ${s.hostname || s.name}`, body, await doneOf(kit, req, res));
  });
  const upgradeOutcome = (r: { data: { upgrade?: { id: string }; id?: string } }) => {
    const uid = r.data.upgrade?.id ?? r.data.id;
    return { location: uid ? `/portal/upgrades/${uid}` : "", notice: "The upgrade is requested." };
  };
  action(kit, router, "/services/:id/upgrades", { back }, async (req, _res, api, token) =>
    upgradeOutcome(
      await api(OPS.requestUpgrade, {
        params: { id: String(req.params.id) },
        body: { toProductId: bodyText(req, "toProductId") },
        token,
      }),
    ),
  );
  action(kit, router, "/services/:id/upgrades/options", { back }, async (req, _res, api, token) => {
    const remove = [req.body?.removeOptions ?? []].flat().map(String);
    return upgradeOutcome(
      await api(OPS.optionChange, {
        params: { id: String(req.params.id) },
        body: { addOptions: [], removeOptions: remove },
        token,
      }),
    );
  });
  page(kit, router, "/upgrades/:id", async (req, res, api) => {
    const u = (await api<z.infer<typeof upgrade>>(OPS.upgrade, { params: { id: String(req.params.id) } }))
      .data;
    const cur = u.document?.currency ?? sessionOf(res).currency;
    const body = html`${facts([
      ["Status", badge(u.status)],
      ["Type", u.type],
      ["Service", html`<a href="${svcBase(u.service_id)}">${u.service_id}</a>`],
      ["Amount", money(u.amount, cur)],
      ["Credit", money(u.credit, cur)],
      ["Price holds until", at(u.priced_until)],
      [
        "Invoice",
        u.document ? html`<a href="/portal/invoices/${u.document.id}">${u.document.number}</a>` : undefined,
      ],
      ["Requested", at(u.created_at)],
      ["Completed", at(u.completed_at)],
    ])}
${
  u.status === "awaiting_payment" && u.priced_until
    ? html`<p id="quote-holds">This price holds until it expires on ${at(u.priced_until)}: pay ${u.document ? html`the invoice <a href="/portal/invoices/${u.document.id}">${u.document.number}</a>` : "it"} by then and it is charged exactly ${money(u.amount, cur)}. Unpaid by then, the upgrade expires and its invoice is cancelled; you can request it again at that day's price.</p>`
    : ""
}
${u.status === "awaiting_payment" ? buttonForm(`/portal/upgrades/${u.id}/cancel`, "Cancel the upgrade", sessionOf(res).csrfToken, { danger: true }) : ""}`;
    kit.render(res, "Upgrade", body, await doneOf(kit, req, res));
  });
  action(
    kit,
    router,
    "/upgrades/:id/cancel",
    { back: (req) => `/portal/upgrades/${String(req.params.id)}` },
    async (req, _res, api, token) => {
      await api(OPS.cancelUpgrade, { params: { id: String(req.params.id) }, token });
      return { location: `/portal/upgrades/${String(req.params.id)}`, notice: "The upgrade is cancelled." };
    },
  );
}

/** A machine's snapshots or backups: the same columns, each row's own actions. */
function copiesTable<
  C extends { id: string; name: string; status: string; size_gb: number; created_at: string },
>(title: "Snapshots" | "Backups", copies: readonly C[], actions: (c: C) => Html) {
  return table(
    title,
    ["Name", "Status", "Size", "Taken", "Actions"],
    copies.map((c) => [c.name, badge(c.status), `${c.size_gb} GB`, at(c.created_at), actions(c)]),
    `No ${title.toLowerCase()} yet.`,
  );
}
