/** Storage of the recurring cycle's settings: company-wide (one row) and per account. */
import type { Sql, TxSql } from "@hb/platform";

export interface BillingSettings {
  renewalLeadDays: number;
  suspendGraceDays: number;
  terminateGraceDays: number;
}

interface SettingsRow {
  renewal_lead_days: number;
  suspend_grace_days: number;
  terminate_grace_days: number;
}

const fromRow = (r: SettingsRow): BillingSettings => ({
  renewalLeadDays: r.renewal_lead_days,
  suspendGraceDays: r.suspend_grace_days,
  terminateGraceDays: r.terminate_grace_days,
});

export async function readBillingSettings(db: Sql | TxSql): Promise<BillingSettings> {
  const [row] = await db<SettingsRow[]>`
    select renewal_lead_days, suspend_grace_days, terminate_grace_days from billing_settings`;
  return fromRow(row);
}

/** Changes the fields given (undefined: unchanged); the contract bounds each. */
export async function updateBillingSettings(
  db: Sql | TxSql,
  change: Partial<BillingSettings>,
): Promise<BillingSettings> {
  const [row] = await db<SettingsRow[]>`
    update billing_settings set
      renewal_lead_days = coalesce(${change.renewalLeadDays ?? null}::int, renewal_lead_days),
      suspend_grace_days = coalesce(${change.suspendGraceDays ?? null}::int, suspend_grace_days),
      terminate_grace_days = coalesce(${change.terminateGraceDays ?? null}::int, terminate_grace_days)
    returning renewal_lead_days, suspend_grace_days, terminate_grace_days`;
  return fromRow(row);
}

/** Sets an account's automatic payment of renewals from credit (on unless set off). */
export async function setAutoPay(db: Sql | TxSql, customerId: string, on: boolean): Promise<void> {
  await db`insert into account_billing (customer_id, auto_pay) values (${customerId}, ${on})
    on conflict (customer_id) do update set auto_pay = excluded.auto_pay`;
}
