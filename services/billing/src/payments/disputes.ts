import type { TxSql } from "@hb/platform";
import { displayMoney } from "@hb/platform/money";
import { lockBalance } from "../account-currency.ts";
import { clock } from "../clock.ts";
import { move } from "../ledger.ts";
import { formatMoney, max, min, money, type Units } from "../money.ts";
import type { DisputeFacts } from "./provider.ts";
import { takeBack } from "./take-back.ts";
import type { Outcome, TopUpRow } from "./top-up-row.ts";

/** A dispute as stored (card_disputes, migration 015). */
export interface DisputeRow {
  provider: string;
  dispute_id: string;
  top_up_id: string;
  amount: string;
  currency: string;
  status: string;
  funds: "not_withdrawn" | "withdrawn" | "reinstated";
  taken: string;
  shortfall: string;
  opened_at: Date;
  updated_at: Date;
}

/**
 * One event of a card dispute on a top-up whose row the caller has locked. The money follows the
 * provider's: when it takes the disputed amount (funds withdrawn, or a lost dispute whose
 * withdrawal we never heard of) the credit bought with it is taken back, never below zero (what
 * was already spent is the shortfall, shown to staff); when it gives it back (funds reinstated, or
 * a won dispute) exactly what was taken comes back. The dispute's row is the idempotency key of
 * both moves, so the several events of one dispute (and their replays, in any order) move each
 * once; the event's own id already keeps a replay from being read twice (provider_events).
 */
export async function actOnDispute(
  tx: TxSql,
  provider: string,
  row: TopUpRow,
  d: DisputeFacts,
): Promise<Outcome> {
  const topUpId = row.id;
  if (d.currency !== row.currency) {
    return {
      outcome: "flagged",
      detail: `dispute ${d.id} in ${d.currency}, the top-up is in ${row.currency}`,
      topUpId,
    };
  }
  // The row is created by whichever of its events comes first, and locked for the rest.
  const [dispute] = await tx<DisputeRow[]>`
    insert into card_disputes (provider, dispute_id, top_up_id, amount, currency, status, opened_at, updated_at)
    values (${provider}, ${d.id}, ${topUpId}, ${formatMoney(d.amount)}, ${d.currency}, ${d.status}, ${clock.now()}, ${clock.now()})
    on conflict (provider, dispute_id) do update set status = excluded.status, updated_at = excluded.updated_at
    returning *`;
  await tx`update top_ups set disputed = true where id = ${topUpId}`;

  const takes = d.step === "withdrawn" || (d.step === "closed" && d.status === "lost");
  const gives = d.step === "reinstated" || (d.step === "closed" && d.status === "won");
  if (takes && dispute.funds === "not_withdrawn") return withdraw(tx, row, dispute, d);
  if (gives && dispute.funds === "withdrawn") return reinstate(tx, row, dispute);
  return {
    outcome: "recorded",
    detail: `dispute ${d.id} ${d.status}; ${dispute.funds === "not_withdrawn" ? "no money moved" : `funds already ${dispute.funds}`}`,
    topUpId,
  };
}

async function withdraw(tx: TxSql, row: TopUpRow, dispute: DisputeRow, d: DisputeFacts): Promise<Outcome> {
  const topUpId = row.id;
  if (row.status !== "credited") {
    // Not credited yet (events arrive in any order): the credit, when it comes, leaves this out.
    await tx`update card_disputes set funds = 'withdrawn' where provider = ${dispute.provider} and dispute_id = ${d.id}`;
    return {
      outcome: "recorded",
      detail: `dispute ${d.id}: funds withdrawn before the payment was credited`,
      topUpId,
    };
  }
  // Never more than this payment still holds on the balance: what arrived, less refunds and the
  // other disputes' withdrawals.
  const [{ others }] = await tx<{ others: string }[]>`
    select coalesce(sum(amount), 0)::text as others from card_disputes
    where top_up_id = ${topUpId} and funds = 'withdrawn' and dispute_id <> ${d.id}`;
  const held = max(0n, money(row.received ?? "0") - money(row.refunded) - money(others));
  const due = min(d.amount, held);
  const take = await takeBack(tx, row, due, "Card payment disputed");
  await tx`update card_disputes set funds = 'withdrawn', taken = ${formatMoney(take)},
    shortfall = ${formatMoney(due - take)} where provider = ${dispute.provider} and dispute_id = ${d.id}`;
  return {
    outcome: "dispute_debited",
    detail: `dispute ${d.id}: withdrawn ${displayMoney(d.amount, row.currency)}, taken back ${displayMoney(take, row.currency)}, short ${displayMoney(due - take, row.currency)}`,
    topUpId,
  };
}

async function reinstate(tx: TxSql, row: TopUpRow, dispute: DisputeRow): Promise<Outcome> {
  const taken = money(dispute.taken);
  if (taken > 0n) {
    await lockBalance(tx, row.person_id, row.customer_id, row.currency);
    await move(tx, {
      personId: row.person_id,
      customerId: row.customer_id,
      amount: taken,
      kind: "credit_added",
      description: "Card dispute won: credit given back",
    });
  }
  // The shortfall was owed only while the provider held the money.
  await tx`update card_disputes set funds = 'reinstated', shortfall = 0
    where provider = ${dispute.provider} and dispute_id = ${dispute.dispute_id}`;
  return {
    outcome: "dispute_reinstated",
    detail: `dispute ${dispute.dispute_id}: reinstated, given back ${displayMoney(taken, row.currency)}`,
    topUpId: row.id,
  };
}

/**
 * Disputes whose funds the provider withdrew before the payment was credited: the credit leaves
 * them out, and they count as taken back (so a won dispute gives them back). Called by creditOnce
 * with the top-up locked; answers the amount to leave out.
 */
export async function withheldByDisputes(tx: TxSql, topUpId: string, credit: Units): Promise<Units> {
  const rows = await tx<{ dispute_id: string; provider: string; amount: string }[]>`
    select dispute_id, provider, amount::text from card_disputes
    where top_up_id = ${topUpId} and funds = 'withdrawn' and taken = 0 and shortfall = 0
    order by opened_at, dispute_id for update`;
  let left = credit;
  for (const r of rows) {
    const take = min(money(r.amount), max(0n, left));
    left -= take;
    await tx`update card_disputes set taken = ${formatMoney(take)}
      where provider = ${r.provider} and dispute_id = ${r.dispute_id}`;
  }
  return credit - max(0n, left);
}
