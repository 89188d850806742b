import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceSummarySchema } from "@hb/contracts/hb/billing/v1/services_pb";
import { prepared, type Sql } from "@hb/platform";
import { moneyOut, timeOut } from "./contract-values.ts";
import { billingCycle, cancellationType, productKind, serviceStatus } from "./enums.ts";
import { HOURLY } from "./money.ts";

export interface ServiceRow {
  id: string;
  customer_id: string;
  person_id: string | null;
  product_id: string;
  product_name: string;
  order_id: string | null;
  kind: string;
  name: string;
  hostname: string;
  status: string;
  cycle: string;
  amount: string;
  currency: string;
  next_due_date: Date;
  /** The day of month of its first term: every due date falls on it (clamped); null when hourly. */
  anchor_day: number | null;
  cancellation: { type: string; reason: string; requested_at: string; effective_at: string } | null;
  os_image_id: string;
  server_ip: string;
  failure_reason: string | null;
  partner_id: string | null;
  charged_until: Date | null;
  suspended_by: string | null;
  /** Who holds the service suspended (billing, supplier, partner, customer); empty when none. */
  suspensions: string[];
  created_at: Date;
}

/** Services joined with their product name. */
const serviceSelect = `select s.*, p.name as product_name from services s join products p on p.id = s.product_id`;

type Queryable = { unsafe: Sql["unsafe"] };
/**
 * Services matching a WHERE clause (with $1… parameters), joined with their product. Prepared:
 * every caller passes a fixed clause, so the prepared statements stay few.
 */
export const selectServices = (db: Queryable, where: string, params: unknown[]) =>
  db.unsafe<ServiceRow[]>(`${serviceSelect} where ${where}`, params as never[], prepared);

export const summaryOut = (r: ServiceRow): MessageInitShape<typeof ServiceSummarySchema> => ({
  id: r.id,
  customerId: r.customer_id,
  name: r.name,
  hostname: r.hostname,
  kind: productKind.out(r.kind),
  status: serviceStatus.out(r.status),
  product: { id: r.product_id, name: r.product_name },
  billing: {
    cycle: billingCycle.out(r.cycle),
    price: moneyOut(r.amount, r.currency),
    // An hourly service is next charged when its paid hour runs out.
    nextDueDate: timeOut(r.cycle === HOURLY && r.charged_until ? r.charged_until : r.next_due_date),
  },
  cancellation: r.cancellation
    ? {
        type: cancellationType.out(r.cancellation.type),
        reason: r.cancellation.reason,
        requestedAt: timeOut(new Date(r.cancellation.requested_at)),
        effectiveAt: timeOut(new Date(r.cancellation.effective_at)),
      }
    : undefined,
  createdAt: timeOut(r.created_at),
  orderId: r.order_id ?? undefined,
  failureReason: r.failure_reason ?? undefined,
});

export interface DocumentRow {
  id: string;
  kind: "invoice" | "proforma";
  number: string;
  customer_id: string;
  person_id: string | null;
  status: string;
  total: string;
  amount_paid: string;
  currency: string;
  purpose: string;
  order_id: string | null;
  service_id: string | null;
  converted_to: string | null;
  created_at: Date;
  due_date: Date;
  paid_at: Date | null;
  /** Read only where the query selects DOCUMENT_NAMES (the lists and the detail). */
  order_number?: string | null;
  service_hostname?: string | null;
  converted_invoice_number?: string | null;
  from_proforma_number?: string | null;
}

/**
 * What a document's ids name, as columns beside `documents.*` (the outer table must be
 * `documents`, unaliased): correlated look-ups by primary key, and the proforma a document came
 * from by the converted_to index, so a page of documents names its order, service and converted
 * invoice in the same statement instead of a query per row.
 */
export const DOCUMENT_NAMES = `
  (select o.order_number from orders o where o.id = documents.order_id) as order_number,
  (select s.hostname from services s where s.id = documents.service_id) as service_hostname,
  (select c.number from documents c where c.id = documents.converted_to) as converted_invoice_number,
  (select f.number from documents f where f.converted_to = documents.id limit 1) as from_proforma_number`;

export interface LineRow {
  id: string;
  document_id: string;
  description: string;
  amount: string;
  service_id: string | null;
}

export interface OrderRow {
  id: string;
  order_number: string;
  customer_id: string;
  person_id: string;
  status: string;
  payment_status: string;
  total: string;
  currency: string;
  partner_id: string | null;
  external_order_id: string | null;
  external_customer_id: string | null;
  payment_mode: string;
  payment_error: string | null;
  created_at: Date;
}

/** A product option (an add-on a product offers). */
export interface OptionRow {
  id: string;
  product_id: string;
  name: string;
  recurring_price: string | null;
  one_time_price: string | null;
}

/** An upgrade of a service, as stored. */
export interface UpgradeRow {
  id: string;
  service_id: string;
  kind: string;
  from_product_id: string;
  to_product_id: string | null;
  add_options: string[];
  remove_options: string[];
  amount: string;
  status: string;
  document_id: string | null;
  order_id: string | null;
  priced_until: Date | null;
  credit: string;
  created_at: Date;
  completed_at: Date | null;
  priced_at: Date | null;
}
