import type { TxSql } from "@hb/platform";
import { money, type Units } from "./money.ts";
import { unusedValue } from "./proration.ts";

/** One paid term of an add-on: what was paid for [start, end). */
export interface PaidTerm {
  paid: Units;
  start: Date;
  end: Date;
}

/**
 * What giving up an add-on returns at `now`: for each term paid for, the unused share of what was
 * paid for that term (the current term's unused part, every term paid ahead whole, nothing of a
 * term already over). Each term is valued on its own, so a cheap short month is not averaged with
 * a long one (issue 28 §2).
 */
export function termsValue(terms: PaidTerm[], now: Date): Units {
  return terms.reduce((sum, t) => sum + unusedValue(t.paid, t.start, t.end, now), 0n);
}

/** The add-on's fields its paid terms are read from. */
export interface AddonTermsSource {
  id: string;
  paid_amount: string;
  period_start: Date | null;
  started_at: Date;
  next_due_date: Date | null;
}

/**
 * The add-on's paid terms: its first period (from its start to the first renewal, paid what the
 * add-on holds less its renewals) and each paid renewal term up to the next one (the last up to the
 * paid-up date).
 */
export async function paidTerms(tx: TxSql, a: AddonTermsSource): Promise<PaidTerm[]> {
  if (!a.next_due_date) return [];
  const start = a.period_start ?? a.started_at;
  const renewals = await tx<{ term_start: Date; total: string }[]>`
    select r.term_start, d.total::text from renewal_terms r join documents d on d.id = r.document_id
    where r.addon_id = ${a.id} and d.status = 'paid' and r.term_start >= ${start} and r.term_start < ${a.next_due_date}
    order by r.term_start`;
  const renewed = renewals.reduce((sum, r) => sum + money(r.total), 0n);
  const first = money(a.paid_amount) - renewed;
  const end = a.next_due_date;
  return [
    { paid: first > 0n ? first : 0n, start, end: renewals[0]?.term_start ?? end },
    ...renewals.map((r, i) => ({
      paid: money(r.total),
      start: r.term_start,
      end: renewals[i + 1]?.term_start ?? end,
    })),
  ];
}
