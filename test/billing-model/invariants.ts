/**
 * The invariants of billing's money, read straight from its schema (read-only) for the customers
 * of one run. Each check returns what broke, named, so a failure says which promise was broken.
 */
import type postgres from "postgres";
import { fmt, type Units, units } from "./money.ts";

export interface Violation {
  invariant: string;
  detail: string;
}

export interface Scope {
  customers: { customerId: string; currency: string }[];
  partnerId: string;
  /** Staff top-ups the test made, per person. */
  added: Map<string, Units>;
  /** What card and bank transfer top-ups should have credited, per person (each once). */
  toppedUp: Map<string, Units>;
  /** What the card provider reported refunded, per person. */
  refunded: Map<string, Units>;
  ledgerCurrency: boolean;
  /** Person id → readable name (owner0, member0, partner) for the reports. */
  names: Map<string, string>;
}

const KINDS = ["credit_added", "credit_removed", "payment", "refund", "hourly_charge"];

/** All checks read one snapshot: background work (hourly charges) must not fall between two reads. */
export async function checkInvariants(db: postgres.Sql, s: Scope): Promise<Violation[]> {
  return db.begin("isolation level repeatable read read only", (tx) => check(tx, s));
}

async function check(sql: postgres.TransactionSql, s: Scope): Promise<Violation[]> {
  const out: Violation[] = [];
  const add = (invariant: string, detail: string) => out.push({ invariant, detail });
  const ids = s.customers.map((c) => c.customerId);
  const who = (personId: string) => s.names.get(personId) ?? personId;
  const curs = s.customers.map((c) => c.currency);

  // 1. Each balance equals its ledger (sum and last balance_after) and is never negative.
  const balances = await sql<
    { person_id: string; balance: string; sum: string; last: string | null; n: number }[]
  >`
    select b.person_id, b.balance::text, coalesce(l.sum, 0)::text as sum, l.last::text, coalesce(l.n, 0)::int as n
    from balances b left join lateral (
      select sum(amount) as sum, count(*) as n,
        (select balance_after from ledger x where x.person_id = b.person_id order by x.id desc limit 1) as last
      from ledger where person_id = b.person_id) l on true
    where b.customer_id = any(${ids}::uuid[])`;
  let total = 0n;
  for (const b of balances) {
    const bal = units(b.balance);
    total += bal;
    if (bal !== units(b.sum))
      add("balance == Σ ledger", `${who(b.person_id)}: balance ${b.balance}, ledger sums to ${b.sum}`);
    if (b.n > 0 && b.last !== null && bal !== units(b.last))
      add("balance == last balance_after", `${who(b.person_id)}: balance ${b.balance}, last ${b.last}`);
    if (bal < 0n) add("balance >= 0", `${who(b.person_id)}: ${b.balance}`);
  }
  const orphans = await sql<{ person_id: string }[]>`
    select distinct person_id from ledger where customer_id = any(${ids}::uuid[])
      and person_id not in (select person_id from balances)`;
  for (const o of orphans)
    add("balance == Σ ledger", `ledger entries of ${who(o.person_id)} without a balance`);

  // 2. The money in the system: what staff added, less what was charged, plus what was given back.
  const kinds = await sql<{ kind: string; sum: string }[]>`
    select kind, sum(amount)::text as sum from ledger where customer_id = any(${ids}::uuid[]) group by kind`;
  let expected = 0n;
  for (const k of kinds) {
    if (!KINDS.includes(k.kind))
      add("money in the system", `ledger kind "${k.kind}" (${k.sum}) is none of ${KINDS.join(", ")}`);
    else expected += units(k.sum);
  }
  const madeByTest = [...s.added.values()].reduce((a, b) => a + b, 0n);
  const creditAdded = units(kinds.find((k) => k.kind === "credit_added")?.sum ?? "0");
  if (creditAdded !== madeByTest)
    add("money in the system", `credit_added ${fmt(creditAdded)} but staff added ${fmt(madeByTest)}`);
  if (total !== expected)
    add(
      "money in the system",
      `Σ balances ${fmt(total)} ≠ added − payments + refunds − hourly = ${fmt(expected)}`,
    );

  // 3. Credit rises only by a staff top-up or a refund of what that same person paid on that document.
  const rises = await sql<
    { id: string; person_id: string; kind: string; amount: string; document_id: string | null }[]
  >`
    select id::text, person_id, kind, amount::text, document_id from ledger
    where customer_id = any(${ids}::uuid[]) and amount > 0
      and (kind not in ('credit_added', 'refund') or (kind = 'refund' and document_id is null))`;
  for (const r of rises)
    add(
      "credit rises only by top-up or refund",
      `ledger #${r.id}: +${r.amount} ${r.kind} to ${who(r.person_id)}${r.document_id ? ` on ${r.document_id}` : " without a document"}`,
    );
  const perPerson = await sql<{ person_id: string; sum: string }[]>`
    select person_id, sum(amount)::text as sum from ledger
    where customer_id = any(${ids}::uuid[]) and kind = 'credit_added' group by person_id`;
  for (const p of perPerson) {
    const made = s.added.get(p.person_id) ?? 0n;
    if (units(p.sum) !== made)
      add(
        "credit rises only by top-up or refund",
        `${who(p.person_id)}: credit_added ${p.sum}, staff added ${fmt(made)}`,
      );
  }
  // 3b. A top-up credits once, whatever its provider's events did (replayed, reordered, at once),
  // and a card refund takes back at most what was refunded.
  const topUps = await sql<{ person_id: string; received: string; credits: number; taken: string }[]>`
    select p.person_id, coalesce(t.received, 0)::text as received, coalesce(t.credits, 0)::int as credits,
      coalesce(r.taken, 0)::text as taken
    from (select distinct person_id from balances where customer_id = any(${ids}::uuid[])) p
    left join (select person_id, sum(received) as received, count(c.top_up_id) as credits
               from top_ups left join top_up_credits c on c.top_up_id = top_ups.id
               where status = 'credited' group by person_id) t on t.person_id = p.person_id
    left join (select person_id, -sum(amount) as taken from ledger
               where kind = 'credit_removed' and description = 'Card payment refunded' group by person_id) r
      on r.person_id = p.person_id`;
  for (const t of topUps) {
    const expected = s.toppedUp.get(t.person_id) ?? 0n;
    if (units(t.received) !== expected)
      add(
        "a top-up credits once",
        `${who(t.person_id)}: top-ups credited ${t.received}, expected ${fmt(expected)}`,
      );
    if (units(t.taken) > (s.refunded.get(t.person_id) ?? 0n))
      add(
        "a refund takes back at most what was refunded",
        `${who(t.person_id)}: took back ${t.taken}, refunded ${fmt(s.refunded.get(t.person_id) ?? 0n)}`,
      );
  }

  // A proforma's payments stay on it; the invoice it became is the same purchase.
  const refunds = await sql<{ person_id: string; grp: string; paid: string; refunded: string }[]>`
    with grp as (
      select d.id, coalesce((select p.id from documents p where p.converted_to = d.id limit 1), d.id) as grp
      from documents d where d.customer_id = any(${ids}::uuid[]))
    select l.person_id, coalesce(g.grp, l.document_id)::text as grp,
      coalesce(-sum(l.amount) filter (where l.kind = 'payment'), 0)::text as paid,
      coalesce(sum(l.amount) filter (where l.kind = 'refund'), 0)::text as refunded
    from ledger l left join grp g on g.id = l.document_id
    where l.customer_id = any(${ids}::uuid[]) and l.document_id is not null and l.kind in ('payment', 'refund')
    group by 1, 2`;
  for (const r of refunds) {
    if (units(r.refunded) > units(r.paid))
      add(
        "refund <= what that person paid",
        `${who(r.person_id)} on document ${r.grp}: refunded ${r.refunded}, paid ${r.paid}`,
      );
  }

  // 4. No document paid beyond its total; its payment entries add up to amount_paid.
  const docs = await sql<
    {
      id: string;
      number: string;
      kind: string;
      status: string;
      total: string;
      amount_paid: string;
      paid: string;
      refunded: string;
      source_paid: string | null;
      source_total: string | null;
    }[]
  >`
    select d.id, d.number, d.kind, d.status, d.total::text, d.amount_paid::text,
      coalesce((select -sum(amount) from ledger l where l.document_id = d.id and l.kind = 'payment'), 0)::text as paid,
      coalesce((select sum(amount) from ledger l where l.document_id = d.id and l.kind = 'refund'), 0)::text as refunded,
      p.amount_paid::text as source_paid, p.total::text as source_total
    from documents d left join documents p on p.converted_to = d.id
    where d.customer_id = any(${ids}::uuid[])`;
  for (const d of docs) {
    const tot = units(d.total);
    const amountPaid = units(d.amount_paid);
    const paid = units(d.paid);
    const net = paid - units(d.refunded);
    const name = `${d.kind} ${d.number} (${d.status})`;
    if (amountPaid > tot || amountPaid < 0n)
      add("document paid <= total", `${name}: amount_paid ${d.amount_paid} of ${d.total}`);
    if (net > tot) add("document paid <= total", `${name}: ${fmt(net)} kept of a total ${d.total}`);
    if (d.source_paid !== null) {
      // An invoice a paid proforma became: no payment of its own, paid in full through the proforma.
      if (paid !== 0n) add("payments == amount_paid", `${name}: converted invoice has payments ${d.paid}`);
      if (d.source_total !== null && units(d.source_paid) !== units(d.source_total))
        add("payments == amount_paid", `${name}: its proforma paid ${d.source_paid} of ${d.source_total}`);
    } else if (d.status === "cancelled") {
      if (net !== 0n) add("cancelled document keeps nothing", `${name}: ${fmt(net)} paid and not given back`);
    } else if (paid !== amountPaid && net !== amountPaid) {
      // (net: a document whose total was reduced below what was paid, the excess given back)
      add("payments == amount_paid", `${name}: payments ${d.paid}, amount_paid ${d.amount_paid}`);
    }
    if (d.status === "paid" && amountPaid !== tot)
      add("document paid <= total", `${name}: paid but amount_paid ${d.amount_paid} of ${d.total}`);
  }

  // 5. One order per (partner, external order id).
  const dups = await sql<{ external_order_id: string; n: number }[]>`
    select external_order_id, count(*)::int as n from orders
    where partner_id = ${s.partnerId} and external_order_id is not null group by 1 having count(*) > 1`;
  for (const d of dups)
    add("external order id charged at most once", `"${d.external_order_id}": ${d.n} orders`);

  // 6. Nothing crosses currencies: every balance, entry, document, order and service of an account.
  const acct = sql`select unnest(${ids}::uuid[]) as cid, unnest(${curs}::text[]) as cur`;
  const crossed = await sql<{ what: string; id: string; currency: string; cur: string }[]>`
    with a as (${acct})
    select 'balance' as what, b.person_id::text as id, b.currency, a.cur from balances b join a on a.cid = b.customer_id where b.currency <> a.cur
    union all
    select 'document ' || d.number, d.id::text, d.currency, a.cur from documents d join a on a.cid = d.customer_id where d.currency <> a.cur
    union all
    select 'order ' || o.order_number, o.id::text, o.currency, a.cur from orders o join a on a.cid = o.customer_id where o.currency <> a.cur
    union all
    select 'service', s.id::text, s.currency, a.cur from services s join a on a.cid = s.customer_id where s.currency <> a.cur`;
  for (const c of crossed)
    add(
      "nothing crosses currencies",
      `${c.what.startsWith("balance") ? `balance of ${who(c.id)}` : `${c.what} ${c.id}`} in ${c.currency}, account in ${c.cur}`,
    );
  if (s.ledgerCurrency) {
    const entries = await sql<{ id: string; currency: string; cur: string }[]>`
      with a as (${acct})
      select l.id::text, l.currency, a.cur from ledger l join a on a.cid = l.customer_id where l.currency <> a.cur`;
    for (const e of entries)
      add("nothing crosses currencies", `ledger #${e.id} in ${e.currency}, account in ${e.cur}`);
  }

  // 7. An open renewal invoice is priced at the service's current price (re-priced by upgrades).
  const renewals = await sql<{ number: string; total: string; amount: string }[]>`
    select d.number, d.total::text, s.amount::text from documents d join services s on s.id = d.service_id
    where d.customer_id = any(${ids}::uuid[]) and d.purpose = 'renewal' and d.status = 'unpaid'
      and s.status not in ('terminated', 'cancelled') and d.amount_paid <= s.amount and d.total <> s.amount`;
  for (const r of renewals)
    add("open renewal at the current price", `${r.number}: total ${r.total}, service price ${r.amount}`);
  return out;
}
