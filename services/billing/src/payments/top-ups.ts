import type { MessageInitShape } from "@bufbuild/protobuf";
import { TopUpMethod, type TopUpSchema, TopUpStatus } from "@hb/contracts/hb/billing/v1/payments_pb";
import { apiError, isUuid, type Sql, type TxSql } from "@hb/platform";
import { displayMoney } from "@hb/platform/money";
import { lockBalance } from "../account-currency.ts";
import { clock } from "../clock.ts";
import { moneyOut, timeOut } from "../contract-values.ts";
import { moveEntry } from "../ledger.ts";
import { formatMoney, money, type Units } from "../money.ts";
import { transact } from "../shared.ts";
import { actOnDispute, withheldByDisputes } from "./disputes.ts";
import type { PaymentFacts, ProviderEvent } from "./provider.ts";
import { takeBack } from "./take-back.ts";
import type { Outcome, TopUpRow } from "./top-up-row.ts";

/** A top-up as stored. */

const METHOD = { card: TopUpMethod.CARD, bank_transfer: TopUpMethod.BANK_TRANSFER } as const;
const STATUS = {
  pending: TopUpStatus.PENDING,
  credited: TopUpStatus.CREDITED,
  cancelled: TopUpStatus.CANCELLED,
} as const;

export function topUpOut(r: TopUpRow): MessageInitShape<typeof TopUpSchema> {
  const refunded = money(r.refunded);
  return {
    id: r.id,
    method: METHOD[r.method],
    status: STATUS[r.status],
    customerId: r.customer_id,
    personId: r.person_id,
    requested: moneyOut(r.requested, r.currency),
    received: r.received === null ? undefined : moneyOut(r.received, r.currency),
    reference: r.reference ?? "",
    createdAt: timeOut(r.created_at),
    creditedAt: timeOut(r.credited_at),
    confirmedBy: r.confirmed_by ?? "",
    refunded: refunded > 0n ? moneyOut(refunded, r.currency) : undefined,
    disputed: r.disputed,
    checkoutUrl: r.method === "card" && r.status === "pending" ? (r.checkout_url ?? "") : "",
  };
}

/** Why money arrived and how it is described on the ledger. */
export interface Arrival {
  /** The idempotency record's source: the provider's event id, or `staff:<id>`. */
  source: string;
  amount: Units;
  /** The currency the money came in; unset: the top-up's own (a transfer staff confirm). */
  currency?: string;
  description: string;
  staffId?: string;
  /** The identity that confirmed it by hand (a staff confirmation), from the caller's certificate. */
  operator?: string;
  payment?: PaymentFacts;
}

export type CreditResult =
  | { credited: true; row: TopUpRow; balance: Units }
  | { credited: false; row: TopUpRow; why: "already_credited" | "currency" | "nothing_left" };

/**
 * Credits a top-up exactly once. The top-up's row is locked first (then the balance, the same
 * order on every path), and the credit is recorded in `top_up_credits`, whose primary key is the
 * top-up: the second arrival of the same money (a replayed event, the other event of the same
 * payment, a second or concurrent staff confirmation) conflicts there and moves nothing.
 */
export async function creditOnce(tx: TxSql, topUpId: string, a: Arrival): Promise<CreditResult | undefined> {
  const [row] = await tx<TopUpRow[]>`select * from top_ups where id = ${topUpId} for update`;
  if (!row) return undefined;
  if (a.currency !== undefined && a.currency !== row.currency)
    return { credited: false, row, why: "currency" };
  const [claimed] = await tx<{ top_up_id: string }[]>`
    insert into top_up_credits (top_up_id, source, amount) values (${row.id}, ${a.source}, ${formatMoney(a.amount)})
    on conflict (top_up_id) do nothing returning top_up_id`;
  if (!claimed) return { credited: false, row, why: "already_credited" };
  // A refund or a dispute's withdrawal the provider reported before the payment (events arrive
  // in any order) is not credited.
  const afterRefunds = a.amount - money(row.refunded);
  const amount = afterRefunds - (await withheldByDisputes(tx, row.id, afterRefunds));
  let balance = await lockBalance(tx, row.person_id, row.customer_id, row.currency);
  // The credit's own ledger entry, none when a refund reported earlier left nothing to credit.
  let ledgerId: string | null = null;
  if (amount > 0n) {
    ({ id: ledgerId, balance } = await moveEntry(tx, {
      personId: row.person_id,
      customerId: row.customer_id,
      amount,
      kind: "credit_added",
      description: a.description,
      staffId: a.staffId,
      operator: a.operator,
    }));
  }
  const [updated] = await tx<TopUpRow[]>`
    update top_ups set status = 'credited', received = ${formatMoney(a.amount)}, credited_at = ${clock.now()},
      confirmed_by = ${a.staffId ?? null},
      provider_session = coalesce(provider_session, ${a.payment?.sessionId ?? null}),
      provider_payment = coalesce(provider_payment, ${a.payment?.paymentId ?? null}),
      ledger_id = ${ledgerId}
    where id = ${row.id} returning *`;
  return amount > 0n
    ? { credited: true, row: updated, balance }
    : { credited: false, row: updated, why: "nothing_left" };
}

/**
 * Applies one verified provider event. The event's id is the first idempotency key: its row in
 * `provider_events` is written in the same transaction as whatever it moves, so a replay finds it
 * and moves nothing, and a failure leaves no row (the provider sends it again). Returns false for
 * a replay or an ignored type.
 */
export async function applyProviderEvent(
  sql: Sql,
  provider: string,
  ev: ProviderEvent,
): Promise<Outcome | undefined> {
  if (ev.kind === "ignored") return undefined;
  return transact(sql, async (tx) => {
    const [fresh] = await tx`
      insert into provider_events (provider, event_id, type, outcome) values (${provider}, ${ev.id}, ${ev.type}, 'received')
      on conflict do nothing returning event_id`;
    if (!fresh) return undefined;
    const outcome = await act(tx, provider, ev);
    await tx`update provider_events set outcome = ${outcome.outcome}, detail = ${outcome.detail},
      top_up_id = ${outcome.topUpId ?? null} where provider = ${provider} and event_id = ${ev.id}`;
    return outcome;
  });
}

async function findCardTopUp(tx: TxSql, p: { topUpId?: string; sessionId?: string; paymentId?: string }) {
  const [row] = await tx<{ id: string }[]>`
    select id from top_ups where method = 'card' and (
      id = ${p.topUpId && isUuid(p.topUpId) ? p.topUpId : null}::uuid
      or provider_session = ${p.sessionId ?? null} or provider_payment = ${p.paymentId ?? null})
    limit 1`;
  return row?.id;
}

async function act(
  tx: TxSql,
  provider: string,
  ev: Exclude<ProviderEvent, { kind: "ignored" }>,
): Promise<Outcome> {
  if (ev.kind === "paid") {
    const p = ev.payment;
    const id = await findCardTopUp(tx, p);
    if (!id) return { outcome: "unmatched", detail: "no top-up has this payment" };
    const r = await creditOnce(tx, id, {
      source: ev.id,
      amount: p.amount,
      currency: p.currency,
      description: "Credit added by card",
      payment: p,
    });
    if (!r) return { outcome: "unmatched", detail: "no top-up has this payment", topUpId: id };
    if (r.credited)
      return { outcome: "credited", detail: `${formatMoney(p.amount)} ${p.currency}`, topUpId: id };
    if (r.why === "currency") {
      // The customer paid and nothing was credited: a person decides (refund it, or credit by hand).
      return {
        outcome: "flagged",
        detail: `paid ${displayMoney(p.amount, p.currency)}, the top-up is in ${r.row.currency}: nothing credited`,
        topUpId: id,
      };
    }
    // The payment is already on the balance; this event still tells us the payment's id.
    await tx`update top_ups set provider_payment = coalesce(provider_payment, ${p.paymentId ?? null}),
      provider_session = coalesce(provider_session, ${p.sessionId ?? null}) where id = ${id}`;
    return {
      outcome: "recorded",
      detail: r.why === "nothing_left" ? "refunded in full before" : "already credited",
      topUpId: id,
    };
  }
  const id = await findCardTopUp(tx, {
    paymentId: ev.paymentId,
    topUpId: ev.kind === "refunded" ? ev.topUpId : undefined,
  });
  if (!id) return { outcome: "unmatched", detail: `payment ${ev.paymentId} is no top-up's` };
  const [row] = await tx<TopUpRow[]>`select * from top_ups where id = ${id} for update`;
  if (ev.kind === "dispute") return actOnDispute(tx, provider, row, ev.dispute);
  if (ev.currency !== row.currency) {
    return {
      outcome: "flagged",
      detail: `refund in ${ev.currency}, the top-up is in ${row.currency}: nothing taken back`,
      topUpId: id,
    };
  }
  // The provider reports the refunded total so far: only what exceeds the total already seen is
  // new, so a replayed or an older (reordered) refund event takes nothing.
  const before = money(row.refunded);
  const delta = ev.refunded - before;
  if (delta <= 0n) return { outcome: "recorded", detail: "no new refund", topUpId: id };
  await tx`update top_ups set refunded = ${formatMoney(ev.refunded)},
    provider_payment = coalesce(provider_payment, ${ev.paymentId}) where id = ${id}`;
  // Not credited yet: creditOnce credits only what was not refunded.
  if (row.status !== "credited")
    return { outcome: "recorded", detail: "refunded before it was credited", topUpId: id };
  const take = await takeBack(tx, row, delta, "Card payment refunded");
  if (take < delta) {
    await tx`update top_ups set refund_shortfall = refund_shortfall + ${formatMoney(delta - take)} where id = ${id}`;
  }
  return {
    outcome: "refund_debited",
    detail: `refunded ${formatMoney(delta)} ${row.currency}, taken back ${formatMoney(take)}`,
    topUpId: id,
  };
}

export const alreadyConfirmed = (r: TopUpRow) =>
  apiError(
    "CONFLICT",
    `Transfer ${r.reference} was already confirmed: ${formatMoney(money(r.received ?? "0"))} ${r.currency} credited${r.credited_at ? ` on ${r.credited_at.toISOString().slice(0, 10)}` : ""}`,
  );
