/**
 * A service's page for staff (issue 29 §6): what billing keeps (the service, its documents, its
 * events) beside what compute keeps (the machine, its jobs, its events), in one round of calls,
 * linked from the customer's services, the search and the documents that name it.
 */

import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { ProductKindSchema, ServiceStatusSchema } from "@hb/contracts/hb/billing/v1/common_pb";
import { JobStatusSchema } from "@hb/contracts/hb/compute/v1/jobs_pb";
import { InstanceStateSchema } from "@hb/contracts/hb/compute/v1/machines_pb";
import { enumWord, isUuid, resolveError } from "@hb/platform";
import type { Router } from "express";
import { amount, CURRENT, type CustomerShell, documentState, table, word } from "./admin-customer-view.ts";
import type { AdminDeps } from "./admin-page.ts";
import { day, when } from "./format.ts";
import { html } from "./html.ts";

const events = (label: string, list: { subject: string; at?: Timestamp }[]) =>
  list.length === 0
    ? html`<p class="empty">No events.</p>`
    : table(
        label,
        ["When", "Event"],
        list.map((e) => html`<tr><td>${when(e.at)}</td><td class="mono">${e.subject}</td></tr>`),
      );

export function servicePageRoutes(router: Router, d: AdminDeps, shell: CustomerShell) {
  const { clients, needs, render } = d;
  const { load, show } = shell;

  router.get(
    "/customers/:id/services/:service",
    needs("view_clients", CURRENT, async (req, res) => {
      const customerId = String(req.params.id);
      const serviceId = String(req.params.service);
      const missing = () =>
        render(res, "Service not found", html`<p>No such service of this customer.</p>`, {
          status: 404,
          current: CURRENT,
        });
      if (!isUuid(serviceId)) return missing();
      const [r, b, m] = await Promise.all([
        load(req, res),
        clients.billing.deskGetService({ serviceId }).catch((err: unknown) => {
          if (resolveError(err).status >= 500) throw err;
          return undefined;
        }),
        clients.compute.deskGetMachine({ customerId, serviceId }),
      ]);
      if (!r) return;
      if (!b || b.customerId !== customerId) return missing();
      const s = b.service!;
      const machine = m.machine;
      const content = html`<h2>Service ${s.name}</h2>
<dl class="facts"><dt>Hostname</dt><dd class="mono">${s.hostname || "—"}</dd><dt>Kind</dt><dd>${enumWord(ProductKindSchema, s.kind)}</dd>
<dt>Status</dt><dd>${word(enumWord(ServiceStatusSchema, s.status))}</dd><dt>Product</dt><dd>${s.product?.name ?? "—"}</dd>
<dt>Next due</dt><dd>${day(s.billing?.nextDueDate) || "—"}</dd><dt>Created</dt><dd>${when(s.createdAt)}</dd><dt>Id</dt><dd class="mono">${s.id}</dd></dl>
<h2>Machine</h2>
${
  machine
    ? html`<dl class="facts"><dt>Hostname</dt><dd class="mono">${machine.hostname}</dd><dt>Provider</dt><dd>${machine.provider}</dd>
<dt>State</dt><dd>${machine.instance ? word(enumWord(InstanceStateSchema, machine.instance.state)) : "no instance"}${
        machine.instance?.lostAt
          ? html` — <strong>lost</strong>: its instance has been gone at the provider since ${when(machine.instance.lostAt)}; a reinstall or a backup restore rebuilds it`
          : ""
      }</dd>
<dt>Size</dt><dd>${machine.instance ? `${machine.instance.vcpus} vCPU, ${machine.instance.memoryMb} MB, ${machine.instance.diskGb} GB` : "—"}</dd>
<dt>IP addresses</dt><dd class="mono">${machine.ipAddresses?.addresses.map((a) => a.address).join(", ") || "—"}</dd></dl>`
    : html`<p class="empty">No machine for this service.</p>`
}
<h2>Jobs</h2>
${
  m.jobs.length === 0
    ? html`<p class="empty">No jobs.</p>`
    : table(
        "Jobs",
        ["Started", "Action", "Status", "Finished", "Error"],
        m.jobs.map(
          (j) =>
            html`<tr><td>${when(j.startedAt)}</td><td>${j.action}</td><td>${enumWord(JobStatusSchema, j.status)}</td><td>${when(j.finishedAt) || "—"}</td><td>${j.error ? `${j.error.code}: ${j.error.message}` : "—"}</td></tr>`,
        ),
      )
}
<h2>Documents</h2>
${
  b.documents.length === 0
    ? html`<p class="empty">No documents.</p>`
    : table(
        "Documents",
        ["Number", "Status", "Total", "Due", "Created"],
        b.documents.map(
          (x) =>
            html`<tr><td class="mono">${x.number}</td><td>${documentState(x)}</td><td>${amount(x.total)}</td><td>${amount(x.amountDue)}</td><td>${when(x.createdAt)}</td></tr>`,
        ),
      )
}
<h2>Events</h2>
<h3>Billing</h3>
${events("Billing events", b.events)}
<h3>Compute</h3>
${events("Compute events", m.events)}`;
      show(res, r.customer!, "services", content);
    }),
  );
}
