import type { Logger, Sql } from "@hb/platform";
import { lockBalance, move } from "./ledger.ts";
import { money } from "./money.ts";
import { selectServices } from "./records.ts";
import { setServiceState } from "./service-handlers.ts";

/**
 * Charges hourly services from their owner's credit, one hour at a time, without a document.
 * A service whose owner cannot pay the next hour is suspended (service.suspended). Rows are
 * claimed with SKIP LOCKED, so replicas never charge one hour twice.
 */
export async function chargeDueHours(sql: Sql, ns: string): Promise<number> {
  return sql.begin(async (tx) => {
    const due = await selectServices(
      tx,
      `s.cycle = 'hourly' and s.status in ('pending', 'installing', 'active') and s.charged_until <= clock_timestamp()
       order by s.charged_until limit 100 for update of s skip locked`,
      [],
    );
    for (const s of due) {
      if (!s.person_id) continue;
      const balance = await lockBalance(tx, s.person_id, s.customer_id, s.currency);
      const price = money(s.amount);
      if (balance < price) {
        if (s.status === "active")
          await setServiceState(tx, ns, s, "suspend", "Insufficient credit for hourly charges");
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
    }
    return due.length;
  });
}

export function startHourlyCharger(sql: Sql, ns: string, log: Logger, intervalMs: number) {
  const timer = setInterval(() => {
    chargeDueHours(sql, ns).catch((err: unknown) => log.warn("hourly charging failed", { err }));
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
