/**
 * Revenue follows time (issue 21 §3): for every service, the money billing keeps for it equals the
 * price of the time it provided plus what it would still give back.
 *
 *   kept(S)   = Σ over paid purchases of S's own time (order, renewal, product upgrade; a proforma
 *               and the invoice it became are one purchase) of S's lines on it, less what was given
 *               back on it for S
 *   refund(S) = what ending S now returns: price × unused share of the paid-up term (0 once ended)
 *   earned(S) = kept(S) − refund(S)   (the price of the time provided)
 *
 * Billing never records the price of the time provided, so the model states it by the only two
 * things the domain fixes, exactly enough to catch money appearing or vanishing for a service:
 *   - earned never falls (time provided is never un-provided: a refund returns at most the unused
 *     share, an upgrade charges the price difference for the time left, a renewal buys a term ahead);
 *   - earned never exceeds the price in force × the time provided since its first term began
 *     (summed step by step, the dearer price where a step changed it), unless the service was
 *     ended without a refund (staff, billing for non-payment, or while the supplier held it: then
 *     what is kept is forfeited, by rule).
 * Together: earned stays within [what it was, + the price × the time since]. Exact equality cannot
 * be checked step by step without billing's own clock: billing's now is known only
 * to lie in [lo, hi] of each step, and its rounding (the unused share in parts per million, the
 * refund rounded down, an upgrade's charge rounded half up) differs from the model's float share by
 * up to a few ten-thousandths per operation; so earned is a bracket and each check allows TOLERANCE.
 *
 * A multi-item document is split per service by its lines. What was given back on it (its total
 * less what is kept on it) is put to the service that ended or changed price in the step in which
 * it was given back; a give-back with no such service is itself a violation. Hourly services are
 * left out (no terms, charged by the hour). Money on a purchase still unpaid buys no time yet and is
 * not counted (a cancelled document gives it back, checked elsewhere).
 */
import type postgres from "postgres";
import type { Violation } from "./invariants.ts";
import { addCycle, fmt, MONTHS, scale, share, shiftMonths, type Units, units } from "./money.ts";

/** Rounding per operation (≤ 0.0001 each) and ppm share against float share, over a few operations. */
const TOLERANCE = 20n; // 0.0020

interface SvcRow {
  id: string;
  status: string;
  cycle: string;
  amount: string;
  next_due_date: Date;
  /** The day its terms fall on (money.ts share); null while it has not been paid. */
  anchor_day: number | null;
  suspensions: string[];
}

interface Bracket {
  lo: Units;
  hi: Units;
}

const ENDED = ["terminated", "cancelled"];
/** Paid for and not ended (being built counts: its term runs from payment). */
const live = (status: string) => !ENDED.includes(status) && status !== "pending_payment";

export class RevenueBook {
  /** Given back on each purchase (document id of the final invoice), per service. */
  private readonly givenBack = new Map<string, Map<string, Units>>();
  private readonly earned = new Map<string, Bracket>();
  private readonly prev = new Map<string, SvcRow>();
  /**
   * Per service: the most its time provided can be worth so far (Σ over the model's steps of the
   * dearer of the prices at the step's two ends × the cycles the step spanned, from the start of
   * its first paid term), up to `at`, when the price was `price`.
   */
  private readonly ceiling = new Map<string, { worth: Units; at: Date; price: Units }>();
  /** Services ended without a refund (their kept money is forfeited by rule). */
  private readonly forfeited = new Set<string>();
  /** Services the step just run ended by a refunding actor (customer at once, partner). */
  readonly refundingEnds = new Set<string>();

  async check(sql: postgres.Sql, customerIds: string[], lo: Date, hi: Date): Promise<Violation[]> {
    const out: Violation[] = [];
    const services = await sql<SvcRow[]>`
      select id, status, cycle, amount::text, next_due_date, anchor_day, suspensions from services
      where customer_id = any(${customerIds}::uuid[]) and cycle <> 'hourly'`;
    const byId = new Map(services.map((s) => [s.id, s]));
    // Paid purchases of a service's own time, with what is kept on them (proforma included).
    const docs = await sql<{ id: string; kept: string }[]>`
      select d.id, (select coalesce(-sum(l.amount), 0) from ledger l
          where l.kind in ('payment', 'refund')
            and (l.document_id = d.id or l.document_id in (select p.id from documents p where p.converted_to = d.id))
        )::text as kept
      from documents d
      where d.customer_id = any(${customerIds}::uuid[]) and d.converted_to is null and d.status = 'paid'
        and d.purpose in ('order', 'renewal', 'upgrade')
        and not exists (select 1 from upgrades u where u.kind = 'options'
          and (u.document_id = d.id or u.document_id in (select p.id from documents p where p.converted_to = d.id)))`;
    const lines = await sql<{ document_id: string; service_id: string | null; sum: string }[]>`
      select document_id, service_id, sum(amount)::text as sum from document_lines
      where document_id = any(${docs.map((d) => d.id)}::uuid[]) group by 1, 2`;
    const linesOf = new Map<string, Map<string, Units>>();
    for (const l of lines) {
      const m = linesOf.get(l.document_id) ?? new Map<string, Units>();
      m.set(l.service_id ?? "", (m.get(l.service_id ?? "") ?? 0n) + units(l.sum));
      linesOf.set(l.document_id, m);
    }
    const ended = (id: string) => {
      const s = byId.get(id);
      const before = this.prev.get(id);
      return !!s && ENDED.includes(s.status) && !!before && !ENDED.includes(before.status);
    };
    const repriced = (id: string) => {
      const s = byId.get(id);
      const before = this.prev.get(id);
      return !!s && !!before && units(s.amount) !== units(before.amount);
    };
    const kept = new Map<string, Units>();
    for (const d of docs) {
      const per = linesOf.get(d.id) ?? new Map<string, Units>();
      // A purchase of an hourly service (or of no service) is outside this property.
      if ([...per.keys()].some((id) => !byId.has(id))) continue;
      const total = [...per.values()].reduce((a, b) => a + b, 0n);
      const back = this.givenBack.get(d.id) ?? new Map<string, Units>();
      this.givenBack.set(d.id, back);
      let delta = total - units(d.kept) - [...back.values()].reduce((a, b) => a + b, 0n);
      if (delta !== 0n) {
        const ids = [...per.keys()];
        const to = ids.length === 1 ? ids : ids.filter((id) => ended(id) || repriced(id));
        if (to.length === 0)
          out.push({
            invariant: "revenue follows time",
            detail: `${fmt(delta)} given back on multi-item document ${d.id} while none of its services ended or changed price`,
          });
        // Several ended at once: each takes up to what it was still worth, the rest to the last.
        for (const [i, id] of to.entries()) {
          const b = this.prev.get(id);
          const worth = b ? refundable(b, lo) + TOLERANCE : 0n;
          const take = i === to.length - 1 ? delta : delta < worth ? delta : worth;
          back.set(id, (back.get(id) ?? 0n) + take);
          delta -= take;
        }
      }
      for (const [id, amount] of per) kept.set(id, (kept.get(id) ?? 0n) + amount - (back.get(id) ?? 0n));
    }
    for (const s of services) {
      const price = units(s.amount);
      let c = this.ceiling.get(s.id);
      if (!c && live(s.status)) {
        c = {
          worth: 0n,
          at: shiftMonths(s.next_due_date, -(MONTHS[s.cycle] ?? 1), s.anchor_day ?? undefined),
          price,
        };
        this.ceiling.set(s.id, c);
      }
      if (c && live(s.status) && hi > c.at) {
        // The price can have changed anywhere inside the step: the dearer of its two ends.
        const anchor = s.anchor_day ?? undefined;
        const far = addCycle(hi > s.next_due_date ? hi : s.next_due_date, s.cycle, anchor);
        const spanned = share(c.at, far, s.cycle, anchor) - share(hi, far, s.cycle, anchor);
        c.worth += scale(dearer(price, c.price), spanned);
        c.at = hi;
      }
      if (c) c.price = price;
      const before = this.prev.get(s.id);
      if (ended(s.id) && !(this.refundingEnds.has(s.id) && !before?.suspensions.includes("supplier")))
        this.forfeited.add(s.id);
      const k = kept.get(s.id) ?? 0n;
      const now: Bracket = { lo: k - refundable(s, lo), hi: k - refundable(s, hi) };
      const was = this.earned.get(s.id);
      this.earned.set(s.id, now);
      const where = `service ${s.id} (${s.status}, ${s.cycle} ${s.amount}, paid up to ${s.next_due_date.toISOString()})`;
      const terms = `kept ${fmt(k)}, refundable ${fmt(refundable(s, hi))} … ${fmt(refundable(s, lo))}`;
      if (now.hi < -TOLERANCE)
        out.push({
          invariant: "revenue follows time",
          detail: `${where}: earned ${fmt(now.hi)} < 0 (${terms}): more given back than it was paid less the time it used`,
        });
      else if (was && now.hi < was.lo - TOLERANCE)
        out.push({
          invariant: "revenue follows time",
          detail: `${where}: earned fell from ${fmt(was.lo)} to ${fmt(now.hi)} (${terms}): time already provided was given back or un-charged`,
        });
      if (c && !this.forfeited.has(s.id) && now.lo > c.worth + TOLERANCE + c.worth / 1000n)
        out.push({
          invariant: "revenue follows time",
          detail: `${where}: earned ${fmt(now.lo)} > ${fmt(c.worth)}, the price in force × the time provided (${terms}): kept more than the time provided and what is refundable`,
        });
      this.prev.set(s.id, s);
    }
    this.refundingEnds.clear();
    return out;
  }
}

function dearer(a: Units, b: Units): Units {
  if (a > b) return a;
  return b;
}

/** What ending the service at `t` returns for its own time: price × unused share, 0 once ended. */
function refundable(s: SvcRow, t: Date): Units {
  if (!live(s.status)) return 0n;
  return scale(units(s.amount), share(t, s.next_due_date, s.cycle, s.anchor_day ?? undefined));
}
