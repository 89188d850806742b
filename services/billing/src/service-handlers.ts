import type { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { apiError, badRequest, newId, notFound, type Sql, type TxSql } from "@hb/platform";
import type { AccountLookup } from "./account-lookup.ts";
import { clock } from "./clock.ts";
import { moneyOut } from "./contract-values.ts";
import { createDocument } from "./documents.ts";
import { productKind, serviceAction, serviceStatus } from "./enums.ts";
import { serviceEvent } from "./events.ts";
import type { BillingHandlers } from "./handlers.ts";
import { addCycle, formatMoney, HOURLY, money } from "./money.ts";
import { type ServiceRow, selectServices, summaryOut } from "./records.ts";
import { documentOut } from "./records-out.ts";
import { settleTermination } from "./refunds.ts";
import { callerOf, page, transact } from "./shared.ts";

/** The caller's service (locked when asked); another customer's is NOT_FOUND. */
export async function ownService(
  db: Sql | TxSql,
  customerId: string,
  id: string,
  lock = false,
): Promise<ServiceRow> {
  const [s] = await selectServices(db, `s.id = $1 and s.customer_id = $2${lock ? " for update of s" : ""}`, [
    id,
    customerId,
  ]);
  if (!s) throw notFound("Service");
  return s;
}

export type StateAction = "suspend" | "unsuspend" | "terminate";

/** The action a staff or partner request names (the contract requires one). */
export const stateActionOf = (action: ServiceAction): StateAction => serviceAction.defined(action);

/** Who changes a service's state: a partner may lift only a suspension it made itself. */
export type Actor = "customer" | "partner" | "supplier" | "billing";

/**
 * Changes a service's state, with its event. Termination settles what is open on the service; the
 * customer's own immediate cancellation and a partner's termination also return the unused share
 * of what was paid (staff termination, e.g. for abuse, returns nothing).
 */
export async function setServiceState(
  tx: TxSql,
  ns: string,
  s: ServiceRow,
  name: StateAction,
  reason: string,
  by: Actor,
) {
  const to = { suspend: "suspended", unsuspend: "active", terminate: "terminated" }[name];
  if (s.status === "terminated") throw apiError("CONFLICT", "The service is terminated");
  if (name === "unsuspend" && s.status !== "suspended")
    throw apiError("CONFLICT", "The service is not suspended");
  if (name === "unsuspend" && by === "partner" && s.suspended_by !== "partner")
    throw apiError("FORBIDDEN", "The supplier suspended this service; only the supplier can lift it");
  if (name === "suspend" && s.status !== "active")
    throw apiError("CONFLICT", "Only an active service can be suspended");
  const now = clock.now();
  if (name === "terminate") {
    await settleTermination(tx, ns, s, now, by === "customer" || by === "partner", reason);
    // Termination ends any scheduled cancellation with it.
    await tx`update services set status = ${to}, cancellation = null, suspended_by = null where id = ${s.id}`;
  } else {
    await tx`update services set status = ${to}, suspended_by = ${name === "suspend" ? by : null} where id = ${s.id}`;
  }
  const [updated] = await selectServices(tx, "s.id = $1", [s.id]);
  const [order] = s.order_id ? await tx`select * from orders where id = ${s.order_id}` : [];
  const type = (
    {
      suspend: "service.suspended",
      unsuspend: "service.unsuspended",
      terminate: "service.terminated",
    } as const
  )[name];
  await serviceEvent(tx, ns, type, updated, order as never, reason);
  return updated;
}

/** `accounts` says which currency a customer pays in (auth owns it), for services staff create. */
export function createServiceHandlers(sql: Sql, ns: string, accounts: AccountLookup): BillingHandlers {
  return {
    async getServiceSummaries(req) {
      const caller = callerOf(req.caller);
      const ids = req.serviceIds;
      if (ids.length === 0) return { services: [] };
      const rows = await selectServices(sql, "s.id = any($1::uuid[]) and s.customer_id = $2", [
        ids,
        caller.customerId,
      ]);
      return { services: rows.map(summaryOut) };
    },

    async listServiceSummaries(req) {
      const caller = callerOf(req.caller);
      const p = page(req.page, req.limit, 50);
      const kind = productKind.in(req.kind) ?? null;
      const status = serviceStatus.in(req.status) ?? null;
      // Conditions are added as fragments (not "$x is null or ..."), so the page is read in index
      // order and its cost stays flat in the number of services.
      const where = sql`s.customer_id = ${caller.customerId}
        ${kind ? sql`and s.kind = ${kind}` : sql``} ${status ? sql`and s.status = ${status}` : sql``}`;
      const [rows, [{ n }]] = await Promise.all([
        sql<
          ServiceRow[]
        >`select s.*, p.name as product_name from services s join products p on p.id = s.product_id
          where ${where} order by s.created_at desc, s.id desc limit ${p.limit} offset ${p.offset}`,
        sql<{ n: number }[]>`select count(*)::int as n from services s where ${where}`,
      ]);
      return { services: rows.map(summaryOut), total: n };
    },

    async getServiceStats(req) {
      const caller = callerOf(req.caller);
      const rows = await sql<{ status: string; count: number; amount: string; currency: string }[]>`
        select status, count(*)::int as count, coalesce(sum(amount), 0)::text as amount, min(currency) as currency
        from services where customer_id = ${caller.customerId} group by status order by status`;
      return {
        byStatus: rows.map((r) => ({
          status: serviceStatus.out(r.status),
          count: r.count,
          amount: moneyOut(r.amount, r.currency),
        })),
      };
    },

    async getService(req) {
      const caller = callerOf(req.caller);
      return { service: summaryOut(await ownService(sql, caller.customerId, req.serviceId)) };
    },

    async cancelService(req) {
      const caller = callerOf(req.caller);
      return transact(sql, async (tx) => {
        const s = await ownService(tx, caller.customerId, req.serviceId, true);
        if (["terminated", "cancelled"].includes(s.status))
          throw apiError("CONFLICT", `The service is already ${s.status}`);
        if (req.immediate) {
          return {
            service: summaryOut(
              await setServiceState(
                tx,
                ns,
                s,
                "terminate",
                req.reason || "Cancelled by the customer",
                "customer",
              ),
            ),
          };
        }
        if (s.cancellation)
          throw apiError("CONFLICT", "A cancellation is already scheduled for this service");
        const cancellation = {
          type: "end_of_term",
          reason: req.reason,
          requested_at: clock.now().toISOString(),
          effective_at: s.next_due_date.toISOString(),
        };
        await tx`update services set cancellation = ${tx.json(cancellation)} where id = ${s.id}`;
        const [updated] = await selectServices(tx, "s.id = $1", [s.id]);
        return { service: summaryOut(updated) };
      });
    },

    async withdrawCancellation(req) {
      const caller = callerOf(req.caller);
      return transact(sql, async (tx) => {
        const s = await ownService(tx, caller.customerId, req.serviceId, true);
        if (!s.cancellation || s.status === "terminated") {
          throw apiError("CONFLICT", "No pending cancellation to withdraw for this service");
        }
        await tx`update services set cancellation = null where id = ${s.id}`;
        const [updated] = await selectServices(tx, "s.id = $1", [s.id]);
        return { service: summaryOut(updated) };
      });
    },

    async renewService(req) {
      const caller = callerOf(req.caller);
      return transact(sql, async (tx) => {
        const s = await ownService(tx, caller.customerId, req.serviceId, true);
        if (!["active", "suspended"].includes(s.status)) {
          throw apiError("CONFLICT", `A ${s.status} service cannot be renewed`);
        }
        if (s.cycle === HOURLY)
          throw apiError("CONFLICT", "Hourly services are charged each hour, not renewed");
        if (s.cancellation)
          throw apiError("CONFLICT", "The service is cancelled at the end of its term; withdraw that first");
        const [open] =
          await tx`select id from documents where service_id = ${s.id} and status = 'unpaid' limit 1`;
        if (open)
          throw apiError("CONFLICT", "A billing document is already open on this service; pay it first");
        const until = addCycle(s.next_due_date, s.cycle);
        const invoice = await createDocument(tx, {
          kind: "invoice",
          customerId: s.customer_id,
          personId: caller.personId,
          currency: s.currency,
          purpose: "renewal",
          serviceId: s.id,
          lines: [
            {
              description: `Renewal of ${s.name} (${s.cycle}) ${s.next_due_date.toISOString().slice(0, 10)} – ${until.toISOString().slice(0, 10)}`,
              amount: money(s.amount),
              serviceId: s.id,
            },
          ],
        });
        return { invoice: documentOut(invoice) };
      });
    },

    async adminCreateService(req) {
      // The contract requires UUIDs and defined enums; unspecified is a VPS.
      const kind = productKind.in(req.kind) ?? "vps";
      const [product] = req.productId
        ? await sql<
            { id: string; name: string; currency: string }[]
          >`select id, name, currency from products where id = ${req.productId}`
        : await sql<
            { id: string; name: string; currency: string }[]
          >`select id, name, currency from products where kind = ${kind} order by created_at limit 1`;
      if (!product) throw notFound("Product");
      // A service is billed in its product's currency, which must be the one the account pays in.
      const account = await accounts(req.customerId);
      if (product.currency !== account.currency) {
        const field = req.productId ? "product_id" : "kind";
        throw badRequest(
          field,
          `${field} names a product priced in ${product.currency}; the customer pays in ${account.currency}`,
        );
      }
      const [price] = await sql<{ cycle: string; price: string }[]>`
        select cycle, price from product_prices where product_id = ${product.id} order by (cycle = 'monthly') desc limit 1`;
      const status = serviceStatus.in(req.status) ?? (req.provision ? "pending" : "active");
      const [owner] = await sql<
        { person_id: string }[]
      >`select person_id from balances where customer_id = ${req.customerId} limit 1`;
      const id = newId();
      const cycle = price?.cycle ?? "monthly";
      await sql`insert into services (id, customer_id, person_id, product_id, kind, name, hostname, status, cycle, amount, currency,
                                      next_due_date, os_image_id)
        values (${id}, ${req.customerId}, ${owner?.person_id ?? null}, ${product.id}, ${kind}, ${req.name || product.name},
                ${req.hostname || `${kind}-${id.slice(-8)}`}, ${req.provision ? "pending" : status}, ${cycle},
                ${formatMoney(money(price?.price ?? "0"))}, ${product.currency}, ${addCycle(clock.now(), cycle)}, ${req.osImageId})`;
      const [s] = await selectServices(sql, "s.id = $1", [id]);
      return { service: summaryOut(s) };
    },

    async adminSetServiceState(req) {
      return transact(sql, async (tx) => {
        const [s] = await selectServices(tx, "s.id = $1 for update of s", [req.serviceId]);
        if (!s) throw notFound("Service");
        return {
          service: summaryOut(
            await setServiceState(tx, ns, s, stateActionOf(req.action), req.reason, "supplier"),
          ),
        };
      });
    },
  };
}
