import type { Sql } from "@hb/platform";
import { lockBalance } from "./account-currency.ts";
import { clock } from "./clock.ts";
import { move } from "./ledger.ts";
import { money } from "./money.ts";
import { selectServices } from "./records.ts";
import { recordServices } from "./service-records.ts";
import { setServiceState } from "./service-state.ts";
import { transact } from "./shared.ts";

/**
 * How due work claims its rows: "skip" passes over rows another transaction holds (the periodic
 * pass, so replicas share the work); "wait" waits for them (a clock move, which must have done
 * everything due before it answers, even rows the provisioner or a payment held for a moment).
 */
export type DueLock = "skip" | "wait";

/**
 * Charges hourly services from their owner's credit, one hour at a time, without a document.
 * A service whose owner cannot pay the next hour is suspended (service.suspended). Rows are
 * claimed with SKIP LOCKED, so replicas never charge one hour twice. Returns how many services it
 * charged or suspended: a due service it can do nothing about (no payer, or one still being built
 * whose owner is short) does not count, so callers that repeat until nothing changes always stop.
 */
export async function chargeDueHours(sql: Sql, ns: string, lock: DueLock = "skip"): Promise<number> {
  return transact(sql, async (tx) => {
    const due = await selectServices(
      tx,
      `s.cycle = 'hourly' and s.status in ('pending', 'installing', 'active') and s.charged_until <= $1
       order by s.charged_until limit 100 for update of s${lock === "skip" ? " skip locked" : ""}`,
      [clock.now()],
    );
    let changed = 0;
    for (const s of due) {
      if (!s.person_id) continue;
      const balance = await lockBalance(tx, s.person_id, s.customer_id, s.currency);
      const price = money(s.amount);
      if (balance < price) {
        if (s.status === "active") {
          await setServiceState(tx, ns, s, "suspend", "Insufficient credit for hourly charges", "billing");
          changed++;
        }
        continue;
      }
      await move(tx, {
        personId: s.person_id,
        customerId: s.customer_id,
        amount: -price,
        kind: "hourly_charge",
        description: `${s.name}: hour from ${s.charged_until?.toISOString()}`,
      });
      await tx`update services set charged_until = charged_until + interval '1 hour' where id = ${s.id}`;
      await recordServices(tx, ns, [s.id]);
      changed++;
    }
    return changed;
  });
}

/**
 * Hourly services billing suspended for want of credit are lifted once their owner's credit covers
 * an hour again; their hours start again from then (the hours while suspended are not charged).
 * Only those the credit now covers are read, so services that stay short never hold up the rest.
 */
export async function resumeHourlyServices(sql: Sql, ns: string, lock: DueLock = "skip"): Promise<number> {
  return transact(sql, async (tx) => {
    const covered = await selectServices(
      tx,
      `s.cycle = 'hourly' and s.status = 'suspended' and 'billing' = any(s.suspensions)
       and exists (select 1 from balances b where b.person_id = s.person_id and b.balance >= s.amount)
       order by s.charged_until limit 100 for update of s${lock === "skip" ? " skip locked" : ""}`,
      [],
    );
    let resumed = 0;
    for (const s of covered) {
      if (!s.person_id) continue;
      const balance = await lockBalance(tx, s.person_id, s.customer_id, s.currency);
      if (balance < money(s.amount)) continue;
      await setServiceState(tx, ns, s, "unsuspend", "Credit available for hourly charges", "billing");
      resumed++;
    }
    return resumed;
  });
}
