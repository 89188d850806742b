/**
 * A service's life after it is built: who suspends and lifts it, and what ending it settles. Domain
 * rules with their SQL; handlers (customer, partner, staff) and the due pass all come through here.
 */
import type { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { apiError, notFound, type Sql, type TxSql } from "@hb/platform";
import { currencyMismatch } from "./account-currency.ts";
import { clock } from "./clock.ts";
import { serviceAction } from "./enums.ts";
import { serviceEvent } from "./events.ts";
import { HOURLY } from "./money.ts";
import { type ServiceRow, selectServices } from "./records.ts";
import { settleTermination, supplierHolds } from "./refunds.ts";

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

/**
 * Who changes a service's state. Each is also a suspension source: a source lifts only the
 * suspension it set, and the service is active again once no source holds it.
 */
export type Actor = "customer" | "partner" | "supplier" | "billing";

const HOLDER: Record<Actor, string> = {
  customer: "the customer",
  partner: "the partner",
  supplier: "the supplier",
  billing: "billing (unpaid)",
};

/**
 * Whether ending the service returns the unused share of what was paid. The customer's own
 * immediate cancellation and a partner's termination do; staff and billing do not. One rule for
 * abuse: while the supplier holds a suspension (e.g. for abuse), nobody's termination refunds,
 * exactly as a staff termination for abuse refunds nothing.
 */
export const refundsOnTermination = (s: ServiceRow, by: Actor) =>
  (by === "customer" || by === "partner") && !supplierHolds(s);

/**
 * Whether ending the service returns the unused share of its recurring add-ons: whenever it ends
 * (for non-payment and at the end of its term included), except under the abuse rule (the
 * supplier ends it, or holds it suspended). Prepaid add-ons are never forfeited otherwise.
 */
export const returnsAddonsOnTermination = (s: ServiceRow, by: Actor) =>
  by !== "supplier" && !supplierHolds(s);

/**
 * Changes a service's state, with its event (service.suspended, .unsuspended, .terminated, only
 * when the state itself changes). Termination settles what is open on the service.
 */
export async function setServiceState(
  tx: TxSql,
  ns: string,
  s: ServiceRow,
  name: StateAction,
  reason: string,
  by: Actor,
) {
  if (s.status === "terminated") throw apiError("CONFLICT", "The service is terminated");
  const now = clock.now();
  let changed = true;
  if (name === "terminate") {
    await settleTermination(
      tx,
      ns,
      s,
      now,
      { service: refundsOnTermination(s, by), addons: returnsAddonsOnTermination(s, by) },
      reason,
    );
    // Termination ends any scheduled cancellation and every suspension with it.
    await tx`update services set status = 'terminated', cancellation = null, suspended_by = null, suspensions = '{}'
      where id = ${s.id}`;
  } else if (name === "suspend") {
    if (s.suspensions.includes(by))
      throw apiError("CONFLICT", `The service is already suspended by ${HOLDER[by]}`);
    if (s.status !== "active" && s.status !== "suspended")
      throw apiError("CONFLICT", "Only an active service can be suspended");
    // A second source is recorded beside the first, so lifting one leaves the other in force.
    changed = s.status === "active";
    await tx`update services set status = 'suspended', suspensions = array_append(suspensions, ${by}::text),
      suspended_by = ${by} where id = ${s.id}`;
  } else {
    if (s.status !== "suspended") throw apiError("CONFLICT", "The service is not suspended");
    if (!s.suspensions.includes(by)) {
      const holders = s.suspensions.map((h) => HOLDER[h as Actor] ?? h).join(" and ");
      throw apiError("FORBIDDEN", `The service is suspended by ${holders}; only they can lift it`);
    }
    const left = s.suspensions.filter((h) => h !== by);
    changed = left.length === 0;
    // Hours while suspended are not charged: an hourly service resumes its hours from now.
    await tx`update services set suspensions = ${left}::text[], suspended_by = ${left.at(-1) ?? null},
      status = ${changed ? "active" : "suspended"},
      charged_until = case when ${changed} and cycle = ${HOURLY} then greatest(charged_until, ${now}) else charged_until end
      where id = ${s.id}`;
  }
  const [updated] = await selectServices(tx, "s.id = $1", [s.id]);
  if (changed) {
    const [order] = s.order_id ? await tx`select * from orders where id = ${s.order_id}` : [];
    const type = (
      {
        suspend: "service.suspended",
        unsuspend: "service.unsuspended",
        terminate: "service.terminated",
      } as const
    )[name];
    await serviceEvent(tx, ns, type, updated, order as never, reason);
  }
  return updated;
}

/** Add-ons and upgrades change only an active service, in the caller's currency. */
export function assertChangeable(s: ServiceRow, caller: { currency: string }) {
  if (s.status !== "active")
    throw apiError("CONFLICT", `Add-ons and upgrades need an active service (this one is ${s.status})`);
  if (caller.currency && caller.currency !== s.currency) throw currencyMismatch(s.currency, caller.currency);
}
