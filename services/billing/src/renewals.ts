/**
 * The recurring cycle (docs/architecture.md, Billing): a renewal invoice for every recurring
 * service and recurring add-on, issued `renewal_lead_days` before its paid-up date, once per term;
 * paid automatically from credit at issue, again on the due date and whenever credit lands
 * (late-credit.ts) when the account allows it; paying it extends the paid-up date by exactly one
 * term, on the item's anchor day (money.ts addCycle). A service still unpaid
 * `suspend_grace_days` after its paid-up date is suspended by billing ("overdue"), lifted when it
 * is paid, and terminated `terminate_grace_days` after that date (0: never). An add-on left unpaid
 * past the same grace ends (nothing refunded). An upgrade invoice not paid by the date it was
 * priced up to is voided. Every step runs in the due pass (due.ts), claims its rows with SKIP
 * LOCKED and is keyed in the database, so two replicas and restarts never do one twice.
 */
import { ConnectError } from "@connectrpc/connect";
import { apiError, newId, type Sql, type TxSql } from "@hb/platform";
import { lockedBalance } from "./account-currency.ts";
import { readBillingSettings } from "./billing-settings.ts";
import { clock } from "./clock.ts";
import { createDocument, payFromCredit } from "./documents.ts";
import type { DueLock } from "./hourly.ts";
import { addCycle, CYCLE_MONTHS, formatMoney, HOURLY, money } from "./money.ts";
import { onDocumentPaid, onDocumentPayable } from "./paid-dispatch.ts";
import { type DocumentRow, type ServiceRow, selectServices } from "./records.ts";
import { type AddonRow, addonSelect, cancelDocument, endAddons } from "./refunds.ts";
import { recordServices } from "./service-records.ts";
import { setServiceState } from "./service-state.ts";
import { transact } from "./shared.ts";
import { repriceLateUpgrade } from "./upgrade-pricing.ts";

const DAY_MS = 86_400_000;
const daysAfter = (d: Date, days: number) => new Date(d.getTime() + days * DAY_MS);
const day = (d: Date) => d.toISOString().slice(0, 10);
const skipLocked = (lock: DueLock) => (lock === "skip" ? " skip locked" : "");

/**
 * Writes the renewal invoice of the service's next term, claiming the term first (undefined when
 * it was already issued). Priced at the service's current price, due when the term starts. One the
 * customer asked for (`/renew`) is theirs to pay: automatic payment waits for its due date.
 */
export async function issueServiceRenewal(
  tx: TxSql,
  s: ServiceRow,
  personId: string | null,
  requested = false,
): Promise<DocumentRow | undefined> {
  const id = newId();
  const [claim] = await tx`
    insert into renewal_terms (item_id, term_start, service_id, document_id)
    values (${s.id}, ${s.next_due_date}, ${s.id}, ${id}) on conflict do nothing returning item_id`;
  if (!claim) return undefined;
  const until = addCycle(s.next_due_date, s.cycle, s.anchor_day ?? undefined);
  const doc = await createDocument(tx, {
    id,
    kind: "invoice",
    customerId: s.customer_id,
    personId,
    currency: s.currency,
    purpose: "renewal",
    serviceId: s.id,
    dueDate: s.next_due_date,
    lines: [
      {
        description: `Renewal of ${s.name} (${s.cycle}) ${day(s.next_due_date)} – ${day(until)}`,
        amount: money(s.amount),
        serviceId: s.id,
      },
    ],
  });
  if (requested) await tx`update documents set auto_pay_attempts = 1 where id = ${id}`;
  return doc;
}

/** Renewal invoices for services whose next term starts within the lead time. */
async function issueServiceRenewals(sql: Sql, lock: DueLock): Promise<number> {
  return transact(sql, async (tx) => {
    const { renewalLeadDays } = await readBillingSettings(tx);
    // A service cancelled at the end of its term is not renewed.
    const due = await selectServices(
      tx,
      `s.cycle <> 'hourly' and s.status in ('active', 'suspended') and s.cancellation is null
       and s.next_due_date <= $1
       and not exists (select 1 from renewal_terms r where r.item_id = s.id and r.term_start = s.next_due_date)
       order by s.next_due_date limit 100 for update of s${skipLocked(lock)}`,
      [daysAfter(clock.now(), renewalLeadDays)],
    );
    let issued = 0;
    for (const s of due) if (await issueServiceRenewal(tx, s, s.person_id)) issued++;
    return issued;
  });
}

interface DueAddon extends AddonRow {
  customer_id: string;
  person_id: string | null;
  currency: string;
  recurring_price: string | null;
}

/** Renewal invoices for recurring add-ons, on their own cycle and due date, at current prices. */
async function issueAddonRenewals(sql: Sql, lock: DueLock): Promise<number> {
  return transact(sql, async (tx) => {
    const { renewalLeadDays } = await readBillingSettings(tx);
    const due = await tx.unsafe<DueAddon[]>(
      `select x.*, s.customer_id, s.person_id, s.currency, o.recurring_price::text as recurring_price
       from (${addonSelect}) x join services s on s.id = x.service_id join product_options o on o.id = x.option_id
       where x.status = 'active' and x.billing_type = 'recurring' and x.next_due_date <= $1
         and s.status in ('active', 'suspended') and s.cancellation is null
         and not exists (select 1 from renewal_terms r where r.item_id = x.id and r.term_start = x.next_due_date)
       order by x.next_due_date limit 100 for update of s${skipLocked(lock)}`,
      [daysAfter(clock.now(), renewalLeadDays)],
    );
    let issued = 0;
    for (const a of due) {
      if (!a.next_due_date) continue;
      const id = newId();
      const [claim] = await tx`
        insert into renewal_terms (item_id, term_start, service_id, addon_id, document_id)
        values (${a.id}, ${a.next_due_date}, ${a.service_id}, ${a.id}, ${id}) on conflict do nothing returning item_id`;
      if (!claim) continue;
      const monthly = a.recurring_price === null ? undefined : money(a.recurring_price);
      const price =
        monthly === undefined
          ? money(a.amount)
          : monthly * BigInt(CYCLE_MONTHS[a.cycle] ?? 1) * BigInt(a.quantity);
      const until = addCycle(a.next_due_date, a.cycle, a.started_at.getUTCDate());
      await createDocument(tx, {
        id,
        kind: "invoice",
        customerId: a.customer_id,
        personId: a.person_id,
        currency: a.currency,
        purpose: "addon",
        serviceId: a.service_id,
        dueDate: a.next_due_date,
        lines: [
          {
            description: `Renewal of ${a.name} × ${a.quantity} (${a.cycle}) ${day(a.next_due_date)} – ${day(until)}`,
            amount: price,
            serviceId: a.service_id,
          },
        ],
      });
      issued++;
    }
    return issued;
  });
}

/**
 * Pays open renewals from credit: once when issued and once more when due, for accounts that
 * allow it (all, unless set off), only when the payer's credit covers what is due (never part,
 * never below zero). Each attempt is recorded on the document, so a pass never tries one twice.
 */
async function autoPayRenewals(sql: Sql, ns: string, lock: DueLock): Promise<number> {
  const now = clock.now();
  const candidates = await sql<{ id: string; person_id: string; customer_id: string; attempts: number }[]>`
    select d.id, d.person_id, d.customer_id, d.auto_pay_attempts as attempts from documents d
    where d.status = 'unpaid' and d.purpose in ('renewal', 'addon') and d.person_id is not null
      and (d.auto_pay_attempts = 0 or (d.auto_pay_attempts = 1 and d.due_date <= ${now}))
      and exists (select 1 from renewal_terms r where r.document_id = d.id)
      and coalesce((select a.auto_pay from account_billing a where a.customer_id = d.customer_id), true)
    order by d.due_date limit 100`;
  let tried = 0;
  for (const c of candidates) {
    const attempt = { id: c.id, personId: c.person_id, customerId: c.customer_id, attempts: c.attempts };
    if (await payRenewalFromCredit(sql, ns, attempt, lock)) tried++;
  }
  return tried;
}

/**
 * Pays one open renewal from its payer's credit, when the credit covers what is due (never part,
 * never below zero). An automatic attempt names the attempts it saw and is recorded on the
 * document (1 at issue, 2 on the due date), so a pass never makes one twice; credit that landed
 * (late-credit.ts) pays whatever the attempts were, and takes the renewal off its list. Answers
 * whether the renewal was still open.
 */
export async function payRenewalFromCredit(
  sql: Sql,
  ns: string,
  c: { id: string; personId: string; customerId: string; attempts?: number },
  lock: DueLock,
  credit: { landed: boolean; pay: boolean } = { landed: false, pay: true },
): Promise<boolean> {
  const now = clock.now();
  return transact(sql, async (tx) => {
    // Balance, then document: the order every payment locks them in.
    const balance = await lockedBalance(tx, c.personId);
    // Taken off the list of credit that landed while the balance is held: every credit holds it
    // too, so one landing from here on lists the renewal again (late-credit.ts).
    if (credit.landed) await tx`delete from credit_landed_renewals where document_id = ${c.id}`;
    if (!credit.pay) return false;
    const [doc] = await tx<(DocumentRow & { auto_pay_attempts: number })[]>`
      select * from documents where id = ${c.id} and status = 'unpaid'
      ${c.attempts === undefined ? tx`` : tx`and auto_pay_attempts = ${c.attempts}`}
      ${lock === "skip" ? tx`for update skip locked` : tx`for update`}`;
    if (!doc) return false;
    if (c.attempts !== undefined)
      await tx`update documents set auto_pay_attempts = ${doc.due_date <= now ? 2 : 1} where id = ${doc.id}`;
    const due = money(doc.total) - money(doc.amount_paid);
    if (!balance || balance.currency !== doc.currency || money(balance.balance) < due) return true;
    try {
      await tx.savepoint((sp) =>
        payFromCredit(sp, ns, doc.id, { personId: c.personId, customerId: c.customerId }, undefined, {
          balance,
          document: doc,
        }),
      );
    } catch (err) {
      // Refused by a rule (an upgrade awaiting payment, …): the renewal stays open for the customer.
      if (!(err instanceof ConnectError)) throw err;
    }
    return true;
  });
}

/** Services unpaid `suspend_grace_days` after their paid-up date: suspended by billing. */
async function suspendOverdue(sql: Sql, ns: string, lock: DueLock): Promise<number> {
  return transact(sql, async (tx) => {
    const { suspendGraceDays } = await readBillingSettings(tx);
    const due = await selectServices(
      tx,
      `s.cycle <> 'hourly' and s.status in ('active', 'suspended') and s.cancellation is null
       and not ('billing' = any(s.suspensions)) and s.next_due_date <= $1
       order by s.next_due_date limit 100 for update of s${skipLocked(lock)}`,
      [daysAfter(clock.now(), -suspendGraceDays)],
    );
    for (const s of due) await setServiceState(tx, ns, s, "suspend", "overdue", "billing");
    return due.length;
  });
}

/** Services unpaid `terminate_grace_days` after their paid-up date: terminated, nothing refunded. */
async function terminateOverdue(sql: Sql, ns: string, lock: DueLock): Promise<number> {
  return transact(sql, async (tx) => {
    const { terminateGraceDays } = await readBillingSettings(tx);
    if (terminateGraceDays === 0) return 0;
    const due = await selectServices(
      tx,
      `s.cycle <> 'hourly' and s.status in ('active', 'suspended') and s.next_due_date <= $1
       order by s.next_due_date limit 100 for update of s${skipLocked(lock)}`,
      [daysAfter(clock.now(), -terminateGraceDays)],
    );
    for (const s of due) await setServiceState(tx, ns, s, "terminate", "overdue", "billing");
    return due.length;
  });
}

/** Recurring add-ons unpaid past the suspension grace end (their open renewal cancelled). */
async function endLapsedAddons(sql: Sql, lock: DueLock): Promise<number> {
  return transact(sql, async (tx) => {
    const { suspendGraceDays } = await readBillingSettings(tx);
    const lapsed = await tx.unsafe<AddonRow[]>(
      `${addonSelect} where a.status = 'active' and a.billing_type = 'recurring' and a.next_due_date <= $1
       order by a.next_due_date limit 100 for update of a${skipLocked(lock)}`,
      [daysAfter(clock.now(), -suspendGraceDays)],
    );
    await endAddons(tx, lapsed, clock.now(), { refund: false, why: "renewal unpaid" });
    return lapsed.length;
  });
}

/**
 * Upgrade invoices still unpaid when the date they were priced up to arrives are voided (the
 * price no longer holds: the time it covered is over); part-payments go back.
 */
async function voidStaleUpgrades(sql: Sql, lock: DueLock): Promise<number> {
  const stale = await sql<{ id: string; document_id: string | null }[]>`
    select id, document_id from upgrades where status = 'awaiting_payment' and priced_until <= ${clock.now()}
    order by priced_until limit 100`;
  let voided = 0;
  for (const s of stale) {
    await transact(sql, async (tx) => {
      // Document, then upgrade: the order paying its invoice and cancelling it lock them in.
      if (s.document_id) await tx`select 1 from documents where id = ${s.document_id} for update`;
      const [u] = await tx<{ id: string; document_id: string | null; order_id: string | null }[]>`
        select id, document_id, order_id from upgrades where id = ${s.id} and status = 'awaiting_payment'
        ${lock === "skip" ? tx`for update skip locked` : tx`for update`}`;
      if (!u) return;
      await tx`update upgrades set status = 'cancelled' where id = ${u.id}`;
      if (u.document_id) await cancelDocument(tx, u.document_id, "upgrade price expired");
      if (u.order_id) await tx`update orders set status = 'cancelled' where id = ${u.order_id}`;
      voided++;
    });
  }
  return voided;
}

/** The recurring cycle's share of the due pass, in order; returns how much it did. */
export async function runRenewalCycle(sql: Sql, ns: string, lock: DueLock): Promise<number> {
  let done = 0;
  done += await voidStaleUpgrades(sql, lock);
  done += await issueServiceRenewals(sql, lock);
  done += await issueAddonRenewals(sql, lock);
  done += await autoPayRenewals(sql, ns, lock);
  done += await suspendOverdue(sql, ns, lock);
  done += await terminateOverdue(sql, ns, lock);
  done += await endLapsedAddons(sql, lock);
  return done;
}

/**
 * Whether the service is overdue: its paid-up date has passed (the renewal is unpaid) or billing
 * holds it suspended. Add-ons cannot be bought then, nor upgrades requested.
 */
export function isOverdue(s: ServiceRow): boolean {
  if (s.suspensions.includes("billing")) return true;
  // An hourly service is paid hour by hour from credit: never behind while it runs.
  return s.cycle !== HOURLY && s.next_due_date.getTime() <= clock.now().getTime();
}

/** Whether a renewal of the service (or of one of its add-ons) is open. */
export async function renewalOpen(tx: TxSql, serviceId: string): Promise<boolean> {
  const rows = await tx`
    select 1 from renewal_terms r join documents d on d.id = r.document_id
    where r.service_id = ${serviceId} and d.status = 'unpaid' limit 1`;
  return rows.length > 0;
}

/** A paid renewal moves the paid-up date of what it renews exactly one term on. */
async function renewalPaid(tx: TxSql, ns: string, doc: DocumentRow) {
  const terms = await tx<
    { item_id: string; term_start: Date; service_id: string; addon_id: string | null }[]
  >`
    select item_id, term_start, service_id, addon_id from renewal_terms where document_id = ${doc.id}`;
  if (terms.length === 0 && doc.purpose === "renewal" && doc.service_id) {
    // Issued before terms were recorded: one cycle on from where the service stands.
    const [s] = await selectServices(tx, "s.id = $1 for update of s", [doc.service_id]);
    await tx`update services set next_due_date = ${addCycle(s.next_due_date, s.cycle, s.anchor_day ?? undefined)} where id = ${s.id}`;
    await recordServices(tx, ns, [s.id]);
    await liftIfPaidUp(tx, ns, s.id);
    return;
  }
  for (const t of terms) {
    if (t.addon_id) {
      const [a] = await tx<{ cycle: string; started_at: Date }[]>`
        select cycle, started_at from service_addons where id = ${t.addon_id} and status = 'active' for update`;
      if (!a) continue;
      // What was paid joins what the add-on can give back, over its whole paid period.
      await tx`update service_addons set next_due_date = ${addCycle(t.term_start, a.cycle, a.started_at.getUTCDate())},
          paid_amount = paid_amount + ${formatMoney(money(doc.total))}::numeric,
          funding_documents = array_append(funding_documents, ${doc.id}::uuid)
        where id = ${t.addon_id} and next_due_date = ${t.term_start}`;
      continue;
    }
    const [s] = await selectServices(tx, "s.id = $1 for update of s", [t.service_id]);
    if (!s || s.next_due_date.getTime() !== t.term_start.getTime()) continue;
    await tx`update services set next_due_date = ${addCycle(t.term_start, s.cycle, s.anchor_day ?? undefined)} where id = ${s.id}`;
    await recordServices(tx, ns, [s.id]);
    await liftIfPaidUp(tx, ns, s.id);
  }
}

/** Lifts billing's overdue suspension once the service is paid up (inside its grace again). */
async function liftIfPaidUp(tx: TxSql, ns: string, serviceId: string) {
  const [s] = await selectServices(tx, "s.id = $1", [serviceId]);
  if (s?.status !== "suspended" || !s.suspensions.includes("billing")) return;
  const { suspendGraceDays } = await readBillingSettings(tx);
  if (daysAfter(s.next_due_date, suspendGraceDays).getTime() <= clock.now().getTime()) return;
  await setServiceState(tx, ns, s, "unsuspend", "renewal paid", "billing");
}

/** A renewal is priced at the current plan; an upgrade still waiting would change that price. */
async function renewalPayable(tx: TxSql, doc: DocumentRow) {
  if (!doc.service_id) return;
  const [waiting] =
    await tx`select 1 from upgrades where service_id = ${doc.service_id} and status = 'awaiting_payment'`;
  if (waiting)
    throw apiError(
      "CONFLICT",
      "An upgrade of this service awaits payment; pay or cancel it before the renewal",
    );
}

/**
 * An upgrade invoice is payable only until the date it was priced up to; before then, paid past
 * its price hold, it is re-priced to the time left (upgrade-pricing.ts).
 */
async function upgradePayable(tx: TxSql, doc: DocumentRow) {
  const [u] = await tx<{ priced_until: Date | null }[]>`
    select priced_until from upgrades where document_id = ${doc.id} and status = 'awaiting_payment'`;
  if (!u?.priced_until) return;
  if (u.priced_until.getTime() <= clock.now().getTime())
    throw apiError(
      "CONFLICT",
      `This upgrade was priced up to ${day(u.priced_until)}, which has passed; cancel it and request the upgrade again`,
    );
  await repriceLateUpgrade(tx, doc);
}

onDocumentPaid("renewal", renewalPaid);
onDocumentPaid("addon", renewalPaid);
onDocumentPayable("renewal", renewalPayable);
onDocumentPayable("upgrade", upgradePayable);
