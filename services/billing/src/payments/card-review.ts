import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type CardDisputeFunds,
  CardDisputeFundsSchema,
  CardPaymentFilter,
  type CardPaymentSchema,
  type ListCardPaymentsRequest,
  type ListPaymentEventsRequest,
  type PaymentEventOutcome,
  PaymentEventOutcomeSchema,
  type PaymentEventSchema,
} from "@hb/contracts/hb/billing/v1/payments_pb";
import {
  Counter,
  enumOfWord,
  enumWord,
  type Logger,
  metricsRegistry,
  PAGE_SIZE,
  type Sql,
} from "@hb/platform";
import { moneyOut, timeOut } from "../contract-values.ts";
import { listPage } from "../list-query.ts";
import { money } from "../money.ts";
import type { DisputeRow } from "./disputes.ts";
import type { Outcome, TopUpRow } from "./top-up-row.ts";
import { topUpOut } from "./top-ups.ts";

/**
 * What staff see of card payments (the admin panel's Card payments page): top-ups with a refund, a
 * dispute or a shortfall, and the provider's events billing left for a person. Also the warning
 * and the metric an event that needs a person raises as it is applied.
 */

const cardEvents = new Counter({
  name: "billing_card_events_total",
  help: "Card payment provider events applied, by outcome (flagged and unmatched need a person)",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});

/** Counts an applied event; one that needs a person is also a warning (ids and amounts only, never the payload). */
export function noteOutcome(
  log: Logger,
  provider: string,
  ev: { id: string; type: string },
  o: Outcome,
): void {
  cardEvents.inc({ outcome: o.outcome });
  if (o.outcome === "flagged" || o.outcome === "unmatched") {
    log.warn("card payment event needs a person", {
      provider,
      eventId: ev.id,
      type: ev.type,
      outcome: o.outcome,
      topUpId: o.topUpId,
      detail: o.detail,
    });
  }
}

/** A dispute as json_build_object gives it: amounts as exact text, times as ISO text. */
type DisputeJson = Omit<DisputeRow, "provider" | "top_up_id" | "opened_at" | "updated_at"> & {
  opened_at: string;
  updated_at: string;
};
type Review = TopUpRow & { shortfall: string; disputes: DisputeJson[] | null };

export function cardReview(sql: Sql) {
  return {
    async listCardPayments(req: ListCardPaymentsRequest) {
      const f = req.filter;
      // The shortfall: refunds not taken back, and withdrawals of disputes the provider still holds.
      const { rows, total } = await listPage<Review>(sql, req, PAGE_SIZE.staff, {
        select: sql`select t.*, (t.refund_shortfall + coalesce(d.short, 0))::text as shortfall, d.disputes`,
        from: sql`from top_ups t left join lateral (
            select sum(shortfall) filter (where funds = 'withdrawn') as short,
              json_agg(json_build_object('dispute_id', dispute_id, 'status', status, 'funds', funds,
                'amount', amount::text, 'currency', currency, 'taken', taken::text,
                'shortfall', shortfall::text, 'opened_at', opened_at, 'updated_at', updated_at)
                order by opened_at, dispute_id) as disputes
            from card_disputes cd where cd.top_up_id = t.id) d on true
          where t.method = 'card' and (
            (${f === CardPaymentFilter.UNSPECIFIED || f === CardPaymentFilter.DISPUTED} and t.disputed)
            or (${f === CardPaymentFilter.UNSPECIFIED || f === CardPaymentFilter.REFUNDED} and t.refunded > 0)
            or (${f === CardPaymentFilter.UNSPECIFIED || f === CardPaymentFilter.SHORTFALL}
                and t.refund_shortfall + coalesce(d.short, 0) > 0))`,
        orderBy: sql`t.created_at desc, t.id`,
      });
      return { payments: rows.map(reviewOut), total };
    },

    async listPaymentEvents(req: ListPaymentEventsRequest) {
      const word = enumWord(PaymentEventOutcomeSchema, req.outcome) || null;
      const { rows, total } = await listPage<EventRow>(sql, req, PAGE_SIZE.staff, {
        select: sql`select e.*, t.customer_id`,
        from: sql`from provider_events e left join top_ups t on t.id = e.top_up_id
          where (${word}::text is null and e.outcome in ('unmatched', 'flagged')) or e.outcome = ${word}`,
        orderBy: sql`e.received_at desc, e.event_id`,
      });
      return { events: rows.map(eventOut), total };
    },
  };
}

interface EventRow {
  provider: string;
  event_id: string;
  type: string;
  outcome: Outcome["outcome"];
  detail: string;
  top_up_id: string | null;
  customer_id: string | null;
  received_at: Date;
}

function eventOut(e: EventRow): MessageInitShape<typeof PaymentEventSchema> {
  return {
    provider: e.provider,
    eventId: e.event_id,
    type: e.type,
    outcome: enumOfWord<PaymentEventOutcome>(PaymentEventOutcomeSchema, e.outcome),
    detail: e.detail,
    topUpId: e.top_up_id ?? "",
    customerId: e.customer_id ?? "",
    receivedAt: timeOut(e.received_at),
  };
}

function reviewOut(r: Review): MessageInitShape<typeof CardPaymentSchema> {
  return {
    topUp: topUpOut(r),
    shortfall: moneyOut(money(r.shortfall), r.currency),
    disputes: (r.disputes ?? []).map((d) => ({
      id: d.dispute_id,
      status: d.status,
      funds: enumOfWord<CardDisputeFunds>(CardDisputeFundsSchema, d.funds),
      amount: moneyOut(d.amount, d.currency),
      taken: moneyOut(d.taken, d.currency),
      shortfall: moneyOut(d.shortfall, d.currency),
      openedAt: timeOut(new Date(d.opened_at)),
      updatedAt: timeOut(new Date(d.updated_at)),
    })),
  };
}
