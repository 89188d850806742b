/**
 * The portal's Add credit page (TopUpService): the options in the account's currency, a card
 * payment (a checkout session at the provider) or a bank transfer asked for, the person's own
 * top-ups read, listed and a card one cancelled. Adding credit is paying: pay_invoices is needed.
 */
import type { Caller } from "@hb/contracts/hb/platform/v1/caller_pb";
import { apiError, badRequest, holdsAny, notFound, PAGE_SIZE } from "@hb/platform";
import { cardDecimals } from "@hb/platform/currency-decimals";
import { displayMoney } from "@hb/platform/money";
import { accountCurrency } from "../account-currency.ts";
import { clock } from "../clock.ts";
import { moneyOut } from "../contract-values.ts";
import { listPage } from "../list-query.ts";
import { formatMoney, money, parseMoney, type Units } from "../money.ts";
import { callerOf, isUniqueViolation } from "../shared.ts";
import type { PaymentHandlers, PaymentsDeps } from "./deps.ts";
import { toMinor } from "./minor-units.ts";
import { newReference } from "./reference.ts";
import type { TopUpRow } from "./top-up-row.ts";
import { topUpOut } from "./top-ups.ts";

/** Adding credit is paying: the person needs pay_invoices, as paying an invoice from credit does. */
function payer(caller: Caller | undefined) {
  const ids = callerOf(caller);
  if (!holdsAny(caller?.permissions ?? [], ["pay_invoices"])) {
    throw apiError("FORBIDDEN", "Your account permissions do not allow this action");
  }
  return ids;
}

export function customerTopUps(d: PaymentsDeps): PaymentHandlers {
  const { sql } = d;
  const range = (currency: string) =>
    `${displayMoney(d.limits.min, currency)} to ${displayMoney(d.limits.max, currency)}`;

  function amountOf(text: string, currency: string, card: boolean): Units {
    const amount = parseMoney(text);
    if (amount === undefined || amount < d.limits.min || amount > d.limits.max) {
      throw badRequest("amount", `amount must be a decimal from ${range(currency)}`);
    }
    // Checked before the provider is asked: Stripe refuses a fraction of a whole-unit currency
    // (JPY, and ISK though its API counts hundredths), and the customer should read why here.
    if (card && toMinor(amount, currency) === undefined) {
      throw badRequest(
        "amount",
        cardDecimals(currency) === 0
          ? `amount must be a whole number of ${currency} for a card payment (no decimals)`
          : `amount has more decimals than a card payment in ${currency} allows`,
      );
    }
    return amount;
  }

  /** The person's top-up made with this form token, if any (a repeated submission). */
  const byRequestKey = async (personId: string, key: string) =>
    (await sql<TopUpRow[]>`select * from top_ups where person_id = ${personId} and request_key = ${key}`)[0];

  const ownTopUp = async (ids: { personId: string; customerId: string }, id: string) => {
    const [row] = await sql<TopUpRow[]>`
      select * from top_ups where id = ${id} and person_id = ${ids.personId} and customer_id = ${ids.customerId}`;
    if (!row) throw notFound("Top-up");
    return row;
  };

  async function insertTopUp(
    ids: { personId: string; customerId: string },
    t: { method: "card" | "bank_transfer"; currency: string; amount: Units; key: string },
  ): Promise<TopUpRow> {
    for (let attempt = 0; ; attempt++) {
      try {
        const [row] = await sql<TopUpRow[]>`
          insert into top_ups (id, method, customer_id, person_id, currency, requested, request_key, reference, created_at)
          values (gen_random_uuid(), ${t.method}, ${ids.customerId}, ${ids.personId}, ${t.currency},
                  ${formatMoney(t.amount)}, ${t.key}, ${t.method === "bank_transfer" ? newReference() : null},
                  ${clock.now()})
          on conflict (person_id, request_key) do nothing returning *`;
        return row ?? (await byRequestKey(ids.personId, t.key));
      } catch (err) {
        // Two transfers drew the same reference (one in 10^12): draw again.
        if (attempt < 3 && isUniqueViolation(err, "top_ups_reference_key")) continue;
        throw err;
      }
    }
  }

  return {
    async getTopUpOptions(req) {
      const ids = payer(req.caller);
      const currency = await accountCurrency(sql, ids);
      return {
        cardEnabled: d.card !== undefined && toMinor(d.limits.min, currency) !== undefined,
        currency,
        minimum: moneyOut(d.limits.min, currency),
        maximum: moneyOut(d.limits.max, currency),
        bankDetails: d.bankDetails,
      };
    },

    async startCardTopUp(req) {
      const ids = payer(req.caller);
      const card = d.card;
      if (!card) throw apiError("FEATURE_DISABLED", "Card payments are not offered");
      const currency = await accountCurrency(sql, ids);
      const amount = amountOf(req.amount, currency, true);
      const urls = { success_url: req.successUrl, cancel_url: req.cancelUrl };
      for (const [field, u] of Object.entries(urls)) {
        if (!/^https?:\/\/[^/]/.test(u) || !URL.canParse(u)) {
          throw badRequest(field, `${field} must be an http or https URL`);
        }
      }
      const row = await insertTopUp(ids, { method: "card", currency, amount, key: req.idempotencyKey });
      if (row.method !== "card") throw apiError("CONFLICT", "This form was already used for a bank transfer");
      if (row.checkout_url) return { topUp: topUpOut(row), checkoutUrl: row.checkout_url };
      const fill = (u: string) => u.replaceAll("{TOP_UP_ID}", row.id);
      let checkout: { sessionId: string; url: string };
      try {
        checkout = await card.startCheckout({
          topUpId: row.id,
          amount: money(row.requested),
          currency: row.currency,
          successUrl: fill(req.successUrl),
          cancelUrl: fill(req.cancelUrl),
          description: "Account credit",
        });
      } catch (err) {
        // The row stays pending without a checkout: the same form sent again asks the provider again
        // (the top-up's id is the provider's idempotency key, so no second session is opened).
        d.log.warn("card checkout could not be opened", { topUpId: row.id, err: (err as Error).message });
        throw apiError(
          "PROVIDER_ERROR",
          "The card payment provider could not be reached; try again in a moment",
        );
      }
      const [updated] = await sql<TopUpRow[]>`
        update top_ups set provider_session = ${checkout.sessionId}, checkout_url = ${checkout.url}
        where id = ${row.id} returning *`;
      return { topUp: topUpOut(updated), checkoutUrl: checkout.url };
    },

    async requestBankTransfer(req) {
      const ids = payer(req.caller);
      const currency = await accountCurrency(sql, ids);
      const amount = amountOf(req.amount, currency, false);
      const row = await insertTopUp(ids, {
        method: "bank_transfer",
        currency,
        amount,
        key: req.idempotencyKey,
      });
      if (row.method !== "bank_transfer")
        throw apiError("CONFLICT", "This form was already used for a card payment");
      return { topUp: topUpOut(row), bankDetails: d.bankDetails };
    },

    async getTopUp(req) {
      const ids = payer(req.caller);
      return { topUp: topUpOut(await ownTopUp(ids, req.id)) };
    },

    async listTopUps(req) {
      const ids = payer(req.caller);
      const { rows, total } = await listPage<TopUpRow>(sql, req, PAGE_SIZE.default, {
        select: sql`select *`,
        from: sql`from top_ups where person_id = ${ids.personId} and customer_id = ${ids.customerId}`,
        orderBy: sql`created_at desc, id`,
      });
      return { topUps: rows.map(topUpOut), total };
    },

    async cancelCardTopUp(req) {
      const ids = payer(req.caller);
      const row = await ownTopUp(ids, req.id);
      if (row.method !== "card" || row.status !== "pending" || !d.card) return { topUp: topUpOut(row) };
      // Expired at the provider first: a session that was paid meanwhile cannot be expired, and
      // its top-up stays pending until the payment's event credits it.
      if (row.provider_session && !(await d.card.expireCheckout(row.provider_session))) {
        return { topUp: topUpOut(row) };
      }
      const [updated] = await sql<TopUpRow[]>`
        update top_ups set status = 'cancelled' where id = ${row.id} and status = 'pending' returning *`;
      return { topUp: topUpOut(updated ?? (await ownTopUp(ids, req.id))) };
    },
  };
}
