/**
 * The support desk's search over what billing keeps (BillingDeskService.DeskSearch, issue 29 §6):
 * a service by id or by part of its hostname, an order, invoice or proforma by its number, a bank
 * transfer by its reference. Numbers and references are matched whole, in any case (they are
 * unique); a hostname by part, at most 20 of each kind. Each match says what matched.
 */
import type { DeskMatch } from "@hb/contracts/hb/billing/v1/billing_desk_pb";
import { isUuid, type Sql } from "@hb/platform";
import type { BillingHandlers } from "./handlers.ts";

type Match = Omit<DeskMatch, "$typeName" | "$unknown">;

/** A LIKE pattern that matches `q` literally anywhere. */
const contains = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function createDeskSearch(sql: Sql): BillingHandlers {
  return {
    async deskSearch(req) {
      const q = req.query.trim();
      const [services, orders, documents, transfers] = await Promise.all([
        sql<{ id: string; customer_id: string; hostname: string; name: string; status: string }[]>`
          select id::text, customer_id::text, hostname, name, status from services
          where ${isUuid(q) ? sql`id = ${q}::uuid or` : sql``} (length(${q}) >= 2 and hostname ilike ${contains(q)})
          order by (id::text = ${q} or lower(hostname) = lower(${q})) desc, created_at desc limit 20`,
        sql<{ order_number: string; customer_id: string; status: string; service_id: string | null }[]>`
          select o.order_number, o.customer_id::text, o.status,
                 (select s.id::text from services s where s.order_id = o.id order by s.created_at limit 1) as service_id
          from orders o where upper(o.order_number) = upper(${q})`,
        sql<
          {
            number: string;
            kind: string;
            customer_id: string;
            status: string;
            total: string;
            service_id: string | null;
          }[]
        >`
          select number, kind, customer_id::text, status, total::text, service_id::text from documents
          where upper(number) = upper(${q})`,
        sql<{ reference: string; customer_id: string; status: string }[]>`
          select reference, customer_id::text, status from top_ups where upper(reference) = upper(${q})`,
      ]);
      const matches: Match[] = [
        ...services.map((s) => ({
          matched: s.id === q.toLowerCase() ? "service_id" : "hostname",
          value: s.id === q.toLowerCase() ? s.id : s.hostname,
          customerId: s.customer_id,
          serviceId: s.id,
          detail: `${s.name}${s.hostname ? ` (${s.hostname})` : ""}, ${s.status}`,
        })),
        ...orders.map((o) => ({
          matched: "order_number",
          value: o.order_number,
          customerId: o.customer_id,
          serviceId: o.service_id ?? "",
          detail: `order, ${o.status}`,
        })),
        ...documents.map((d) => ({
          matched: `${d.kind}_number`,
          value: d.number,
          customerId: d.customer_id,
          serviceId: d.service_id ?? "",
          detail: `${d.kind}, ${d.status}, total ${d.total}`,
        })),
        ...transfers.map((t) => ({
          matched: "transfer_reference",
          value: t.reference,
          customerId: t.customer_id,
          serviceId: "",
          detail: `bank transfer, ${t.status}`,
        })),
      ];
      return { matches };
    },
  };
}
