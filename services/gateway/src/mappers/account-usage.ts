import type { AccountUsage } from "@hb/contracts/hb/billing/v1/ledger_pb";
import type { z } from "zod";
import type { accountUsage } from "../wire/account.ts";
import { amountNumber } from "./contract.ts";
import { serviceStatusWords } from "./enums.ts";

/** GET /account/usage. An account without credit yet shows a zero balance and no currency. */
export const accountUsageJson = (u: AccountUsage): z.infer<typeof accountUsage> => ({
  services: {
    total: u.servicesTotal,
    by_status: Object.fromEntries(
      u.servicesByStatus.map((s) => [serviceStatusWords.wire(s.status), s.count]),
    ),
  },
  recurring_monthly_amount: amountNumber(u.recurringMonthlyAmount),
  unpaid_invoices: { count: u.unpaidInvoicesCount, total: amountNumber(u.unpaidInvoicesTotal) },
  paid_this_month: amountNumber(u.paidThisMonth),
  hourly_charges_this_month: amountNumber(u.hourlyChargesThisMonth),
  balance: u.balance ? amountNumber(u.balance) : 0,
  currency: u.balance?.currency ?? "",
});
