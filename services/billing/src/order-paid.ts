/**
 * What paying an order's proforma does: the order becomes paid and active, and its services start
 * (the provisioner picks up services in `pending`) with their first paid term. Registered with the
 * "document paid" dispatch, so the payment engine runs it without importing the orders feature.
 */
import type { TxSql } from "@hb/platform";
import { clock } from "./clock.ts";
import { orderEventInit } from "./events.ts";
import { addCycle, CYCLE_MONTHS, HOURLY } from "./money.ts";
import { startOrderAddonsCte } from "./order-addons.ts";
import { onDocumentPaid, type PaidPayment } from "./paid-dispatch.ts";
import { wakeProvisionerUnlessHandedOver } from "./provisioning.ts";
import type { DocumentRow, OrderRow, ServiceRow } from "./records.ts";
import { recordRowsAtCommit } from "./service-records.ts";
import { sentWithCommit } from "./shared.ts";

async function orderPaid(tx: TxSql, ns: string, doc: DocumentRow, payment: PaidPayment) {
  if (!doc.order_id) return;
  // Both updates (and the provisioner's wake-up, delivered at commit) are sent before the first
  // await, in the payment's round trip (paid-dispatch.ts).
  const orderRows = tx<OrderRow[]>`
    update orders set payment_status = 'paid', status = 'active', payment_error = null
    where id = ${doc.order_id} returning *`.execute();
  // The paid term starts now: a proforma paid a week after the order still buys a whole cycle.
  // One statement for all the order's services: each cycle's next due date is worked out here
  // (calendar months, clamped), for every cycle there is; any other cycle gets addCycle's default.
  const now = clock.now();
  const cycles = [...Object.keys(CYCLE_MONTHS), HOURLY];
  // Returned with their product's name: the records compute's copy is sent (service-records.ts).
  // The order's add-ons start in the same statement.
  const servicesStarted = tx<ServiceRow[]>`
    with ${startOrderAddonsCte(tx, doc.order_id, now, { documentId: doc.id, invoiceId: payment.invoiceId })}
    update services s set status = 'pending', next_due_date = coalesce(
      (select due.date
       from unnest(${cycles}::text[], ${cycles.map((c) => addCycle(now, c).toISOString())}::timestamptz[])
         as due(cycle, date)
       where due.cycle = s.cycle),
      ${addCycle(now, "").toISOString()}::timestamptz),
      anchor_day = ${now.getUTCDate()}
    from products p
    where p.id = s.product_id and s.order_id = ${doc.order_id} and s.status = 'pending_payment'
    returning s.*, p.name as product_name`.execute();
  const [[order], started] = await Promise.all([
    orderRows,
    servicesStarted,
    wakeProvisionerUnlessHandedOver(tx),
  ]);
  // A partner learns of the payment once the services are built (see provisioning.ts). The event
  // and the services' records go in one statement, with the commit where the caller allows it.
  const paid =
    order && !order.partner_id ? [orderEventInit("order.paid", order, { invoiceId: payment.invoiceId })] : [];
  await sentWithCommit(tx, recordRowsAtCommit(tx, ns, started, paid));
  // In the order a read of the order's services gives (created_at, id), so the payer needs none.
  const services = started.sort(
    (a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return { order, services };
}

onDocumentPaid("order", orderPaid);
