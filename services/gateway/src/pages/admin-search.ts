/**
 * The support desk's search (issue 29 §6): one box that finds a customer from whatever the person
 * on the phone has at hand: a service's hostname or id, an IP address, an order number (ORD-…),
 * an invoice or proforma number (INV-…, PRO-…), a team member's e-mail, a bank-transfer reference,
 * or the customer's own name, e-mail or company. Each owner answers for its own records (billing's
 * DeskSearch, compute's DeskFindAddress, auth's SearchPeople), all asked at once; every result says
 * what matched and links to the customer.
 */
import { isIP } from "node:net";
import type { Router } from "express";
import type { AdminDeps } from "./admin-page.ts";
import { type Html, html } from "./html.ts";

const CURRENT = "/admin/search";

/** What matched, in words, by the owners' match names. */
const MATCHED: Record<string, string> = {
  hostname: "Service hostname",
  service_id: "Service id",
  order_number: "Order number",
  invoice_number: "Invoice number",
  proforma_number: "Proforma number",
  transfer_reference: "Bank-transfer reference",
  ip_address: "IP address",
  member_email: "Team member e-mail",
  owner_email: "Owner e-mail",
  customer: "Customer name, e-mail, company or id",
};

interface Found {
  matched: string;
  value: string;
  customerId: string;
  serviceId: string;
  detail: string;
}

export function searchRoutes(router: Router, d: AdminDeps) {
  const { clients, render, needs } = d;

  router.get(
    "/search",
    needs("view_clients", CURRENT, async (req, res) => {
      const q = (typeof req.query.q === "string" ? req.query.q : "").trim().slice(0, 200);
      const none = Promise.resolve(undefined);
      const [{ customers }, billing, address, people] = await Promise.all([
        clients.auth.listCustomers({ email: "" }),
        q ? clients.billing.deskSearch({ query: q }) : none,
        isIP(q) ? clients.compute.deskFindAddress({ address: q }) : none,
        q.length >= 3 ? clients.auth.searchPeople({ email: q }) : none,
      ]);
      const lower = q.toLowerCase();
      const found: Found[] = [
        ...(billing?.matches ?? []),
        ...(address?.holders ?? []).map((h) => ({
          matched: "ip_address",
          value: h.address,
          customerId: h.customerId,
          serviceId: h.serviceId,
          detail: h.hostname,
        })),
        ...(people?.people ?? []).map((p) => ({
          matched: p.isOwner ? "owner_email" : "member_email",
          value: p.email,
          customerId: p.customerId,
          serviceId: "",
          detail: p.name,
        })),
        ...(q
          ? customers
              .filter((c) => [c.name, c.email, c.company, c.id].some((v) => v.toLowerCase().includes(lower)))
              .slice(0, 20)
              .map((c) => ({
                matched: "customer",
                value: c.name,
                customerId: c.id,
                serviceId: "",
                detail: c.email,
              }))
          : []),
      ];
      const names = new Map(customers.map((c) => [c.id, c.company ? `${c.name} (${c.company})` : c.name]));
      const row = (f: Found): Html => {
        const base = `/admin/customers/${f.customerId}`;
        return html`<tr><td>${MATCHED[f.matched] ?? f.matched}</td><td class="mono">${f.value}</td>
<td><a href="${base}">${names.get(f.customerId) ?? f.customerId}</a></td>
<td>${f.serviceId ? html`<a href="${base}/services/${f.serviceId}">Service page</a>` : "—"}</td><td>${f.detail || "—"}</td></tr>`;
      };
      const body = html`<form method="get" action="${CURRENT}" class="filters" role="search">
<div class="field"><label for="s-q">Find</label><input id="s-q" name="q" type="search" value="${q}" aria-describedby="s-q-hint">
<p class="hint" id="s-q-hint">A hostname, IP address, service id, ORD-, INV- or PRO- number, an e-mail, a bank-transfer reference, or a customer's name.</p></div>
<button type="submit">Search</button></form>
${
  !q
    ? ""
    : found.length === 0
      ? html`<p class="empty">Nothing matches “${q}”.</p>`
      : html`<p>${found.length} ${found.length === 1 ? "match" : "matches"}.</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Matches"><table>
<thead><tr><th scope="col">What matched</th><th scope="col">Value</th><th scope="col">Customer</th><th scope="col">Service</th><th scope="col">Detail</th></tr></thead>
<tbody>${found.map(row)}</tbody></table></div>`
}`;
      render(res, "Search", body, { current: CURRENT });
    }),
  );
}
