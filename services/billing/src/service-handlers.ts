import { apiError, badRequest, newId, notFound, PAGE_SIZE, type Sql } from "@hb/platform";
import type { AccountLookup } from "./account-lookup.ts";
import { clock } from "./clock.ts";
import { moneyOut } from "./contract-values.ts";
import { productKind, serviceStatus } from "./enums.ts";
import type { BillingHandlers } from "./handlers.ts";
import { listPage } from "./list-query.ts";
import { addCycle, formatMoney, HOURLY, money } from "./money.ts";
import { wakeProvisioner } from "./provisioning.ts";
import { type ServiceRow, selectServices, summaryOut } from "./records.ts";
import { documentOut } from "./records-out.ts";
import { cancelDocument } from "./refunds.ts";
import { issueServiceRenewal } from "./renewals.ts";
import { recordServices } from "./service-records.ts";
import { ownService, setServiceState, stateActionOf } from "./service-state.ts";
import { callerOf, transact } from "./shared.ts";

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
      const kind = productKind.in(req.kind) ?? null;
      const status = serviceStatus.in(req.status) ?? null;
      // Conditions are added as fragments (not "$x is null or ..."), so the page is read in index
      // order and its cost stays flat in the number of services.
      const { rows, total } = await listPage<ServiceRow>(sql, req, PAGE_SIZE.machines, {
        select: sql`select s.*, p.name as product_name`,
        from: sql`from services s join products p on p.id = s.product_id where s.customer_id = ${caller.customerId}
          ${kind ? sql`and s.kind = ${kind}` : sql``} ${status ? sql`and s.status = ${status}` : sql``}`,
        orderBy: sql`s.created_at desc, s.id desc`,
      });
      return { services: rows.map(summaryOut), total };
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
        await recordServices(tx, ns, [s.id]);
        // A service cancelled at the end of its term is not renewed: an open renewal goes (its
        // part-payments back), and is issued again if the cancellation is withdrawn.
        const renewals = await tx<{ id: string }[]>`
          select d.id from renewal_terms r join documents d on d.id = r.document_id
          where r.service_id = ${s.id} and d.status = 'unpaid' order by d.created_at for update of d`;
        for (const r of renewals) await cancelDocument(tx, r.id, "cancelled at the end of the term");
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
        await recordServices(tx, ns, [s.id]);
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
        const invoice = await issueServiceRenewal(tx, s, caller.personId, true);
        if (!invoice) throw apiError("CONFLICT", "This term's renewal was already issued");
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
      await sql.begin(async (tx) => {
        await tx`insert into services (id, customer_id, person_id, product_id, kind, name, hostname, status, cycle, amount, currency,
                                       next_due_date, anchor_day, os_image_id, created_at)
          values (${id}, ${req.customerId}, ${owner?.person_id ?? null}, ${product.id}, ${kind}, ${req.name || product.name},
                  ${req.hostname || `${kind}-${id.slice(-8)}`}, ${req.provision ? "pending" : status}, ${cycle},
                  ${formatMoney(money(price?.price ?? "0"))}, ${product.currency}, ${addCycle(clock.now(), cycle)}, ${clock.now().getUTCDate()},
                  ${req.osImageId}, ${clock.now()})`;
        await recordServices(tx, ns, [id]);
      });
      if (req.provision) await wakeProvisioner(sql);
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
