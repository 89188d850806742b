/**
 * Credit that arrives late pays (issue 28 §3). Automatic payment tries a renewal at issue and on
 * its due date; a customer who adds credit after that (a card or bank top-up, staff credit, a
 * refund) has every renewal open at that moment paid from it, oldest first, and a service billing
 * suspended for it is lifted once paid up (renewals.ts). Each credit lists those renewals in
 * `credit_landed_renewals` in the transaction that wrote it (a trigger on the ledger, migration
 * 013, so every path that credits is covered) and notifies CREDIT_LANDED_CHANNEL, which wakes the
 * due pass (due.ts).
 */
import type { Sql } from "@hb/platform";
import { payRenewalFromCredit } from "./renewals.ts";

export const CREDIT_LANDED_CHANNEL = "billing_credit_landed";

/** Renewals paid per call; the due pass calls again until none is left. */
const RENEWALS_PER_CALL = 100;

/**
 * Pays the renewals that were open when their payer's credit landed, oldest first, for accounts
 * that pay automatically (the rest are only taken off the list). Returns how many it handled.
 */
export async function payFromLandedCredit(sql: Sql, ns: string): Promise<number> {
  const listed = await sql<{ id: string; person_id: string; customer_id: string; auto_pay: boolean }[]>`
    select d.id, l.person_id, d.customer_id,
           coalesce((select a.auto_pay from account_billing a where a.customer_id = d.customer_id), true) as auto_pay
    from credit_landed_renewals l join documents d on d.id = l.document_id
    order by d.due_date, d.id limit ${RENEWALS_PER_CALL}`;
  // Each its own transaction, so one refused by a rule never holds up the rest; waiting for a row
  // another payment holds, never skipping it, since the listing goes with this attempt.
  for (const d of listed) {
    const renewal = { id: d.id, personId: d.person_id, customerId: d.customer_id };
    await payRenewalFromCredit(sql, ns, renewal, "wait", { landed: true, pay: d.auto_pay });
  }
  return listed.length;
}
