/**
 * One service for the staff service page (BillingDeskService.DeskGetService, issue 29 §6): the
 * service, its documents (the ones naming it and its order's), and the events billing published
 * that name it (found in the outbox by the service id in their payload: a scan bounded by the
 * outbox's retention; a desk page, not a hot path).
 */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { notFound, type Sql } from "@hb/platform";
import type { BillingHandlers } from "./handlers.ts";
import { DOCUMENT_NAMES, type DocumentRow, selectServices, summaryOut } from "./records.ts";
import { documentOut } from "./records-out.ts";

export function createDeskService(sql: Sql): BillingHandlers {
  return {
    async deskGetService(req) {
      const [service] = await selectServices(sql, "s.id = $1", [req.serviceId]);
      if (!service) throw notFound("Service");
      const [documents, events] = await Promise.all([
        sql<DocumentRow[]>`
          select documents.*, ${sql.unsafe(DOCUMENT_NAMES)} from documents
          where service_id = ${service.id} or (order_id is not null and order_id = ${service.order_id ?? null})
          order by created_at desc, id desc limit 20`,
        sql<{ subject: string; created_at: Date }[]>`
          select subject, created_at from outbox
          where position(convert_to(${service.id}, 'UTF8') in payload) > 0
          order by created_at desc limit 20`,
      ]);
      return {
        service: summaryOut(service),
        customerId: service.customer_id,
        documents: documents.map((d) => documentOut(d)),
        events: events.map((e) => ({ subject: e.subject, at: timestampFromDate(e.created_at) })),
      };
    },
  };
}
