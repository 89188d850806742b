/**
 * The instants the due pass walks through (issue 28 §1). Whatever falls due with time (a renewal
 * issued `renewal_lead_days` before its term, automatic payment on the due date, the overdue
 * suspension and termination after their graces, an add-on lapsing, an end-of-term cancellation, an
 * upgrade's price running out) is done at the instant it fell due, in time order, so a pass that
 * runs after a long pause (or a clock moved a year in one step) ends exactly where passes run
 * every minute would: each term is issued and paid before the next is judged overdue.
 */
import type { Sql, TxSql } from "@hb/platform";
import { readBillingSettings } from "./billing-settings.ts";

const DAY_MS = 86_400_000;
const shift = (d: Date, days: number) => new Date(d.getTime() + days * DAY_MS);

/**
 * The earliest instant after `after` and no later than `now` at which something falls due, or
 * undefined when nothing does. Each branch bounds its own column, so the due indexes serve it.
 */
export async function nextDueInstant(db: Sql | TxSql, after: Date, now: Date): Promise<Date | undefined> {
  const {
    renewalLeadDays: lead,
    suspendGraceDays: suspend,
    terminateGraceDays: end,
  } = await readBillingSettings(db);
  const within = (days: number) => [shift(after, days), shift(now, days)];
  const [issueFrom, issueTo] = within(lead);
  const [suspendFrom, suspendTo] = within(-suspend);
  const [endFrom, endTo] = within(-end);
  const [row] = await db<{ at: Date | null }[]>`
    select least(
      -- a service's next term is issued
      (select min(s.next_due_date) - make_interval(days => ${lead}) from services s
       where s.cycle <> 'hourly' and s.status in ('active', 'suspended') and s.cancellation is null
         and s.next_due_date > ${issueFrom} and s.next_due_date <= ${issueTo}
         and not exists (select 1 from renewal_terms r where r.item_id = s.id and r.term_start = s.next_due_date)),
      -- an add-on's next term is issued
      (select min(a.next_due_date) - make_interval(days => ${lead}) from service_addons a
       join services s on s.id = a.service_id
       where a.status = 'active' and a.billing_type = 'recurring' and s.status in ('active', 'suspended')
         and s.cancellation is null and a.next_due_date > ${issueFrom} and a.next_due_date <= ${issueTo}
         and not exists (select 1 from renewal_terms r where r.item_id = a.id and r.term_start = a.next_due_date)),
      -- an open renewal's due date: automatic payment's second attempt
      (select min(d.due_date) from documents d
       where d.status = 'unpaid' and d.purpose in ('renewal', 'addon') and d.auto_pay_attempts < 2
         and d.due_date > ${after} and d.due_date <= ${now}),
      -- the overdue suspension
      (select min(s.next_due_date) + make_interval(days => ${suspend}) from services s
       where s.cycle <> 'hourly' and s.status in ('active', 'suspended') and s.cancellation is null
         and not ('billing' = any(s.suspensions))
         and s.next_due_date > ${suspendFrom} and s.next_due_date <= ${suspendTo}),
      -- an unpaid add-on lapses
      (select min(a.next_due_date) + make_interval(days => ${suspend}) from service_addons a
       where a.status = 'active' and a.billing_type = 'recurring'
         and a.next_due_date > ${suspendFrom} and a.next_due_date <= ${suspendTo}),
      -- the overdue termination (0: never)
      (select min(s.next_due_date) + make_interval(days => ${end}) from services s
       where ${end} > 0 and s.cycle <> 'hourly' and s.status in ('active', 'suspended')
         and s.next_due_date > ${endFrom} and s.next_due_date <= ${endTo}),
      -- an end-of-term cancellation
      (select min(s.next_due_date) from services s
       where s.cancellation is not null and s.status not in ('terminated', 'cancelled')
         and s.next_due_date > ${after} and s.next_due_date <= ${now}),
      -- an upgrade's price runs out
      (select min(u.priced_until) from upgrades u
       where u.status = 'awaiting_payment' and u.priced_until > ${after} and u.priced_until <= ${now})
    ) as at`;
  return row?.at ?? undefined;
}
