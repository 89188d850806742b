/** Storage of the recurring cycle's settings: company-wide (one row) and per account. */
import { apiError, type Sql, type TxSql } from "@hb/platform";
import { transact } from "./shared.ts";

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

/**
 * Changes the fields given (undefined: unchanged); the contract bounds each. The order of the
 * graces is the one rule across fields: an overdue service is suspended first and terminated
 * later (or on the same day, suspended and then terminated), so a termination grace shorter than
 * the suspension grace is refused (0, never terminate, is always allowed). Checked against the row
 * as it would be after the change, under its lock; the table's constraint (migration 013) holds it too.
 */
export async function updateBillingSettings(
  sql: Sql,
  change: Partial<BillingSettings>,
): Promise<BillingSettings> {
  return transact(sql, async (tx) => {
    const [current] = await tx<SettingsRow[]>`
      select renewal_lead_days, suspend_grace_days, terminate_grace_days from billing_settings for update`;
    const suspend = change.suspendGraceDays ?? current.suspend_grace_days;
    const end = change.terminateGraceDays ?? current.terminate_grace_days;
    if (end !== 0 && end < suspend) {
      const message = `must be 0 (never) or at least the suspension grace (${suspend} days): a service is suspended before it is terminated`;
      throw apiError("BAD_REQUEST", `terminate_grace_days ${message}`, {
        violations: [{ field: "terminate_grace_days", message }],
      });
    }
    return writeBillingSettings(tx, change);
  });
}

async function writeBillingSettings(db: TxSql, change: Partial<BillingSettings>): Promise<BillingSettings> {
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
