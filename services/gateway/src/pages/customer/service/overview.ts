import { PAGE_SIZE } from "@hb/platform/paging";
import type { Router } from "express";
import type { z } from "zod";
import type { addressList, machineStats, provisionStatus } from "../../../wire/machine.ts";
import type { serviceList } from "../../../wire/service.ts";
import type { gameDetail, serviceActions } from "../../../wire/service-control.ts";
import { html } from "../../html.ts";
import { sessionOf } from "../../session.ts";
import { doneOf, type Kit, page } from "../kit.ts";
import { provisionWords } from "../machine-words.ts";
import { ORDER } from "../orders.ts";
import { may } from "../page-table.ts";
import { at, badge, buttonForm, facts, money, pageParam, pager, table } from "../ui.ts";
import { usageSection } from "../usage-chart.ts";
import { gameButtons, powerNames, powerSection } from "./power.ts";
import { ACT, attempt, detailOf, kindOf, OPS, serviceTabs, svcBase } from "./table.ts";

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

/** The services list and one service's overview: its facts, power, usage, addresses and billing. */
export function overviewRoutes(kit: Kit, router: Router): void {
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
${may(sessionOf(res), ORDER) ? html`<p><a href="/portal/order">Order a new service</a></p>` : ""}`;
    kit.render(res, "Services", body, await doneOf(kit, req, res));
  });

  page(kit, router, "/services/:id", async (req, res, api) => {
    const s = await detailOf(api, req.params.id as string);
    const id = s.id;
    const kind = kindOf(s);
    const session = sessionOf(res);
    const csrf = session.csrfToken;
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
    const names = powerNames(s, kind, {
      actions: actions.value?.actions,
      power: extra?.[0].value?.power,
    });
    const otherActions =
      kind === "other" && s.status === "active"
        ? (actions.value?.actions ?? []).filter(
            (a) =>
              !names.includes(a) &&
              !["start", "stop", "restart", "reboot", "shutdown", "poweroff", "status", "stats"].includes(a),
          )
        : [];
    const st = stats.value;
    const body = html`${serviceTabs(res, s, base)}
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
${powerSection(res, s, names, { refused: actions.refused })}
${otherActions.length && may(session, ACT.runAction) ? html`<h2>Other actions</h2><div class="actions">${otherActions.map((a) => buttonForm(`${base}/action`, a, csrf, { fields: { action: a } }))}</div>` : ""}
${
  game.value
    ? html`<h2>Game server</h2>${facts([
        ["Game", game.value.game],
        ["State", game.value.state],
        ["Players", `${game.value.players.online} of ${game.value.players.max}`],
        ["Address", game.value.address],
      ])}${gameButtons(res, s)}`
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
${
  may(session, ACT.renew) || (s.cancellation && may(session, ACT.withdraw))
    ? html`<h2>Billing</h2>
<div class="actions">${may(session, ACT.renew) ? buttonForm(`${base}/renew`, "Renew now (bring the next invoice forward)", csrf) : ""}
${s.cancellation && may(session, ACT.withdraw) ? buttonForm(`${base}/withdraw`, "Withdraw the cancellation", csrf) : ""}</div>`
    : ""
}`;
    kit.render(res, s.name || s.hostname || "Service", body, await doneOf(kit, req, res));
  });
}
