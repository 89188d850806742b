/**
 * A customer's records in the admin panel: API keys (revoked through auth's StaffRevokeKey, which
 * checks edit clients itself as well) and the request log, the partner standing, and the audit log.
 */
import { type ApiKey, ApiKeyStatus, ApiKeyStatusSchema } from "@hb/contracts/hb/auth/v1/api_keys_pb";
import { PartnerStatusSchema } from "@hb/contracts/hb/auth/v1/partners_pb";
import { type StaffAction, StaffActionOutcome } from "@hb/contracts/hb/auth/v1/staff_audit_pb";
import { enumWord } from "@hb/platform";
import type { Router } from "express";
import { allowed } from "./admin-actions.ts";
import { CURRENT, type CustomerShell, PAGE_ROWS, pageOf, pager, table } from "./admin-customer-view.ts";
import type { AdminDeps } from "./admin-page.ts";
import { day, when } from "./format.ts";
import { formFields } from "./forms.ts";
import { type Html, html } from "./html.ts";
import { logFilterOf, requestLogView } from "./request-log.ts";
import { sessionOf } from "./session.ts";

export function customerRecordRoutes(router: Router, d: AdminDeps, shell: CustomerShell) {
  const { clients, needs, act } = d;
  const { load, show, done, back } = shell;

  // Keys and request log ----------------------------------------------------------------------
  router.get(
    "/customers/:id/keys",
    needs("view_clients", CURRENT, async (req, res) => {
      const staffId = sessionOf(res).subjectId;
      const customerId = String(req.params.id);
      const [r, keys, log] = await Promise.all([
        load(req, res),
        clients.auth.staffListKeys({ staffId, customerId }),
        clients.auth.staffListRequestLog({ staffId, customerId, limit: 1000 }),
      ]);
      if (!r) return;
      const c = r.customer!;
      const labels = new Map(keys.keys.map((k) => [k.id, k.label]));
      const content = html`<h2>API keys</h2>
${keyTable(c.id, keys.keys, allowed(res, "key.revoke"), sessionOf(res).csrfToken)}
<h2>Request log</h2>
${requestLogView(log.entries, logFilterOf(req.query), `/admin/customers/${c.id}/keys`, { keyLabels: labels, duration: true })}`;
      show(res, c, "keys", content, { notice: done(req) });
    }),
  );

  // Revoking goes through auth's StaffRevokeKey, which checks edit clients itself as well.
  act("key.revoke", async (req, res, _body, audited) => {
    const staffId = sessionOf(res).subjectId;
    const customerId = String(req.params.id);
    const keyId = String(req.params.key);
    const { keys } = await clients.auth.staffListKeys({ staffId, customerId });
    const k = keys.find((x) => x.id === keyId);
    if (!k) {
      const r = await load(req, res);
      if (r) show(res, r.customer!, "keys", html`<p>No such key.</p>`, { status: 404 });
      return;
    }
    await audited(
      res,
      {
        action: "key.revoke",
        customerId,
        target: keyId,
        before: { label: k.label, key: k.display, status: keyStatus(k) },
        after: { status: "revoked" },
      },
      () => clients.auth.staffRevokeKey({ staffId, keyId }),
    );
    back(res, customerId, "keys", "revoked");
  });

  // Partner ------------------------------------------------------------------------------------
  router.get(
    "/customers/:id/partner",
    needs("view_clients", CURRENT, async (req, res) => {
      const [r, { partners }] = await Promise.all([
        load(req, res),
        clients.portal.listPartners({ customerId: String(req.params.id) }),
      ]);
      if (!r) return;
      const c = r.customer!;
      const p = partners[0]?.partner;
      const content = p
        ? html`<h2>Reseller partner</h2><dl class="facts"><dt>Status</dt><dd>${enumWord(PartnerStatusSchema, p.status)}</dd>
<dt>Applied</dt><dd>${when(p.createdAt)}</dd><dt>Signing secret</dt><dd>${p.hasSecret ? `issued ${when(p.secretRotatedAt)}` : "none"}</dd></dl>
<p><a href="/admin/partners/${c.id}">Open the partner's settings and activity</a></p>`
        : html`<h2>Reseller partner</h2><p class="empty">This customer has not applied to the reseller programme.</p>`;
      show(res, c, "partner", content);
    }),
  );

  // Audit log ----------------------------------------------------------------------------------
  router.get(
    "/customers/:id/audit",
    needs("view_clients", CURRENT, async (req, res) => {
      const page = pageOf(req.query.audit_page);
      const [r, a] = await Promise.all([
        load(req, res),
        clients.auth.listStaffActions({ customerId: String(req.params.id), page, limit: PAGE_ROWS }),
      ]);
      if (!r) return;
      const c = r.customer!;
      const content = html`<h2>Audit log</h2>
<p>Every change staff made to this customer, newest first: ${a.total} ${a.total === 1 ? "entry" : "entries"}.</p>
${a.actions.length === 0 ? html`<p class="empty">No staff changes yet.</p>` : auditTable(a.actions)}
${pager(`/admin/customers/${c.id}/audit`, "audit_page", page, a.total)}`;
      show(res, c, "audit", content);
    }),
  );
}

const keyStatus = (k: ApiKey) => enumWord(ApiKeyStatusSchema, k.status) || "active";

function keyTable(customerId: string, keys: ApiKey[], edit: boolean, csrf: string): Html {
  if (!keys.length) return html`<p class="empty">No keys.</p>`;
  return table(
    "API keys",
    [
      "Key",
      "Label",
      "Scopes",
      "IP allowlist",
      "Expires",
      "Last used",
      "Status",
      ...(edit ? ["Actions"] : []),
    ],
    keys.map(
      (k) => html`<tr><td class="mono key">${k.display}</td><td>${k.label}</td><td>${k.scopes.join(", ")}</td>
<td>${k.ipAllowlist.join(", ") || "Any address"}</td><td>${day(k.expiresOn) || "Never"}</td>
<td>${k.lastUsedAt ? html`${when(k.lastUsedAt)}<br><span class="mono">${k.lastUsedIp}</span>` : "Never"}</td>
<td>${k.status === ApiKeyStatus.REVOKED ? `Revoked ${when(k.revokedAt)}` : k.status === ApiKeyStatus.EXPIRED ? "Expired" : "Active"}</td>${
        edit
          ? html`<td>${
              k.status === ApiKeyStatus.REVOKED
                ? ""
                : html`<form method="post" action="/admin/customers/${customerId}/keys/${k.id}/revoke">${formFields(csrf)}<button type="submit" class="danger">Revoke<span class="sr"> ${k.label}</span></button></form>`
            }</td>`
          : ""
      }</tr>`,
    ),
  );
}

const OUTCOME: Record<number, string> = {
  [StaffActionOutcome.PENDING]: "Pending (outcome not recorded)",
  [StaffActionOutcome.SUCCEEDED]: "Done",
  [StaffActionOutcome.FAILED]: "Refused",
  [StaffActionOutcome.UNKNOWN]: "Unknown (answer lost; being settled)",
};

/** A JSON object of the log as "key: value" lines. */
function factsOf(json: string): string {
  if (!json) return "—";
  try {
    const v = JSON.parse(json) as Record<string, unknown>;
    return Object.entries(v)
      .map(([k, x]) => `${k}: ${typeof x === "string" ? x : JSON.stringify(x)}`)
      .join("; ");
  } catch {
    return json;
  }
}

function auditTable(actions: StaffAction[]): Html {
  return table(
    "Audit log",
    ["When", "Staff", "Action", "Target", "Before", "After", "Reason", "Outcome"],
    actions.map(
      (
        a,
      ) => html`<tr><td>${when(a.createdAt)}</td><td>${a.staffName}<br><span class="hint">${a.staffEmail}</span></td>
<td class="mono">${a.action}</td><td class="mono">${targetOf(a)}</td><td>${factsOf(a.before)}</td><td>${factsOf(a.after)}</td>
<td>${a.reason || "—"}</td><td>${OUTCOME[a.outcome] ?? "—"}${a.error ? html`: ${a.error}` : ""}</td></tr>`,
    ),
  );
}

/** An entry's target; a service's links to its staff page (issue 29 §6: every list naming a service). */
const targetOf = (a: StaffAction): Html | string =>
  a.action.startsWith("service.") && a.target && a.customerId
    ? html`<a href="/admin/customers/${a.customerId}/services/${a.target}">${a.target}</a>`
    : a.target || "—";
