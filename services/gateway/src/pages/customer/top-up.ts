import type { Session } from "@hb/contracts/hb/auth/v1/portal_pb";
import {
  type TopUp,
  TopUpMethod,
  TopUpStatus,
  TopUpStatusSchema,
} from "@hb/contracts/hb/billing/v1/payments_pb";
import { enumWord, isUuid, PAGE_SIZE, resolveError } from "@hb/platform";
import { currencyDecimals } from "@hb/platform/currency-decimals";
import { displayMoney, MONEY_DECIMALS, readMoney, readPositiveMoney } from "@hb/platform/money";
import type { Request, Response, Router } from "express";
import type { PageClients } from "../../clients.ts";
import { PORTAL_COOLDOWNS } from "../../cooldowns.ts";
import { when } from "../format.ts";
import { type FormState, field } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { sessionOf } from "../session.ts";
import { Refused } from "./api.ts";
import { action, bodyText, doneOf, fieldErrors, type Kit, page, refusalPage } from "./kit.ts";
import { may, pageAction, refusalOf } from "./page-table.ts";
import { buttonForm, facts, formTokens, money, pageParam, pager, table } from "./ui.ts";

const BASE = "/portal/add-credit";

/** Top-ups are billing's, not the API's: the rule the API applies to paying from credit. */
const TOP_UP_NEED = {
  permissions: ["pay_invoices"],
  write: true,
  why: "top-ups are not in the customer API (the spec keeps card and bank payments in the portal); billing's TopUpService under the API's rule for paying from credit",
} as const;
const ACT = {
  card: pageAction({
    path: "/add-credit/card",
    ops: [],
    own: TOP_UP_NEED,
    redirect: "/portal/add-credit/:topUpId",
  }),
  bank: pageAction({
    path: "/add-credit/bank",
    ops: [],
    own: TOP_UP_NEED,
    redirect: "/portal/add-credit/:topUpId",
  }),
  cancel: pageAction({
    path: "/add-credit/:id/cancel",
    ops: [],
    own: TOP_UP_NEED,
    redirect: "/portal/add-credit/:id",
  }),
};
/** The same, as the portal's router (mounted at /portal) matches it. */
const ROUTE = "/add-credit";

/**
 * "Add credit": a card top-up (Stripe Checkout, shown only when billing has a card provider) or a
 * bank transfer with a reference. Top-ups are not part of the customer API (the spec: "credit is
 * the only payment method on this API; card and gateway payments stay in the portal"), so these
 * pages call billing's TopUpService themselves, under the rule the API applies to paying from
 * credit: the pay_invoices permission, and no writes while the account is suspended. Forms act
 * once (kit.ts) and the token is also billing's idempotency key for the top-up.
 */
export function topUpRoutes(
  kit: Kit,
  router: Router,
  billing: PageClients["topUps"],
  publicUrl: string,
): void {
  const callerOf = (s: Session) => ({
    customerId: s.customerId,
    personId: s.subjectId,
    permissions: s.permissions,
    isOwner: s.isOwner,
    currency: s.currency,
  });

  /**
   * The table's refusal (page-table.ts) for a person who may not pay, or, for a write, an account
   * that is read-only: every top-up action has the same need, so the card's stands for them all.
   */
  function refusal(res: Response, write: boolean): Refused | undefined {
    const r = refusalOf(sessionOf(res), ACT.card, { read: !write });
    return r ? new Refused(403, { success: false, error: r.message, code: r.code }) : undefined;
  }

  /** Billing's refusals as the portal's (beside the field they name), anything else thrown on. */
  async function call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const r = resolveError(err);
      if (r.status >= 500) throw err;
      throw new Refused(r.status, {
        success: false,
        error: r.message,
        code: r.code,
        details: r.info?.violations.map((v) => ({ field: v.field, message: v.message })),
      });
    }
  }

  /**
   * A short balance elsewhere links here with what is missing (?amount=5.9993): the forms start with
   * it rounded up to what can be paid (the currency's decimals), and at least the smallest top-up.
   */
  function startingAmount(asked: unknown, currency: string, minimum: string | undefined) {
    const read = typeof asked === "string" ? readPositiveMoney(asked) : undefined;
    if (!read?.ok) return undefined;
    const step = 10n ** BigInt(MONEY_DECIMALS - currencyDecimals(currency));
    let units = ((read.units + step - 1n) / step) * step;
    const least = minimum === undefined ? undefined : readMoney(minimum);
    if (least?.ok && units < least.units) units = least.units;
    return displayMoney(units, currency).split(" ")[0];
  }

  async function addCreditPage(
    req: Request,
    res: Response,
    forms: Partial<Record<"card" | "bank", FormState>>,
    status?: number,
  ) {
    const denied = refusal(res, false);
    if (denied) return refusalPage(kit, res, denied);
    const caller = callerOf(sessionOf(res));
    const p = pageParam(req.query.page);
    const [options, list] = await Promise.all([
      call(() => billing.getTopUpOptions({ caller })),
      call(() => billing.listTopUps({ caller, page: p, limit: PAGE_SIZE.default })),
    ]);
    const cur = options.currency;
    const limits = `From ${money(options.minimum?.amount, cur)} to ${money(options.maximum?.amount, cur)}.`;
    const readOnly = refusal(res, true);
    const form = (kind: "card" | "bank", intro: Html, button: string) => {
      const start = startingAmount(req.query.amount, cur, options.minimum?.amount);
      const f: FormState = forms[kind] ?? { values: start ? { [`${kind}-amount`]: start } : {}, errors: {} };
      return html`<section aria-labelledby="${kind}-title"><h2 id="${kind}-title">${kind === "card" ? "Pay by card" : "Bank transfer"}</h2>
${intro}
${f.general ? html`<p class="error" role="alert" id="form-error">${f.general}</p>` : ""}
<form method="post" action="${BASE}/${kind}" novalidate>${formTokens(sessionOf(res).csrfToken)}
${field(f, `${kind}-amount`, `Amount (${cur})`, { hint: limits, required: true, attrs: html` inputmode="decimal"` })}
<button type="submit">${button}</button></form></section>`;
    };
    const body = html`<p>Credit pays invoices, proformas and hourly charges. It is added in your account's currency, ${cur}.</p>
${
  readOnly
    ? html`<p class="error" role="alert">${readOnly.message}</p>`
    : html`${
        options.cardEnabled
          ? form(
              "card",
              html`<p>You are sent to our card processor's secure page; the credit appears as soon as the payment is confirmed.</p>`,
              "Continue to card payment",
            )
          : html`<section aria-labelledby="card-title" id="card-unavailable"><h2 id="card-title">Card payment</h2><p>Card payment is not available at the moment; add credit by bank transfer below.</p></section>`
      }
${form(
  "bank",
  html`<p>You get a reference to quote on the transfer; the credit appears once we have received the money (usually one to three working days).</p>`,
  "Get transfer details",
)}`
}
<h2>Your top-ups</h2>
${table(
  "Top-ups",
  ["Asked", "Method", "Amount", "Status", "Reference", "Credited"],
  list.topUps.map((t) => [
    html`<a href="${BASE}/${t.id}">${when(t.createdAt)}</a>`,
    methodWord(t),
    money(t.requested?.amount, cur),
    statusWord(t),
    t.reference,
    t.received ? money(t.received.amount, cur) : "—",
  ]),
  "No top-ups yet.",
)}
${pager(BASE, { page: p, limit: PAGE_SIZE.default, total: list.total })}`;
    kit.render(res, "Add credit", body, {
      ...(await doneOf(kit, req, res)),
      status,
    });
  }

  page(kit, router, ROUTE, (req, res) => addCreditPage(req, res, {}));

  for (const kind of ["card", "bank"] as const) {
    action(
      kit,
      router,
      ACT[kind],
      {
        back: () => BASE,
        form: async (req, res, err) => {
          const values = { [`${kind}-amount`]: bodyText(req, `${kind}-amount`) };
          await addCreditPage(
            req,
            res,
            { [kind]: fieldErrors(err, values, { amount: `${kind}-amount` }) },
            err.status,
          );
          return true;
        },
      },
      async (req, res, _api, token) => {
        const denied = refusal(res, true);
        if (denied) throw denied;
        const caller = callerOf(sessionOf(res));
        const amount = bodyText(req, `${kind}-amount`).trim();
        // A repeat of the same form never gets here (once.ts answers it), so only a new top-up
        // consumes the window; one billing refuses gives its reservation back, as the API's do.
        const held = await kit.cooldown(PORTAL_COOLDOWNS.topUp, caller.personId, "all");
        if (!held.ok) {
          res.setHeader("Retry-After", String(held.retryAfterSeconds));
          throw new Refused(429, {
            success: false,
            error: `Too many top-ups in a short time; try again in ${held.retryAfterSeconds} seconds.`,
            code: "ACTION_RATE_LIMITED",
          });
        }
        let r: Awaited<ReturnType<typeof billing.startCardTopUp | typeof billing.requestBankTransfer>>;
        try {
          r =
            kind === "card"
              ? await call(() =>
                  billing.startCardTopUp({
                    caller,
                    amount,
                    successUrl: `${publicUrl}${BASE}/{TOP_UP_ID}/return?result=paid`,
                    cancelUrl: `${publicUrl}${BASE}/{TOP_UP_ID}/return?result=cancelled`,
                    idempotencyKey: token,
                  }),
                )
              : await call(() => billing.requestBankTransfer({ caller, amount, idempotencyKey: token }));
        } catch (err) {
          await held.release();
          throw err;
        }
        const t = r.topUp;
        if (!t) throw new Error("billing answered without the top-up");
        return {
          location: `${BASE}/${t.id}`,
          notice:
            kind === "card"
              ? "Your card payment is ready: continue to the payment page."
              : `Transfer ${money(t.requested?.amount, t.requested?.currency)} quoting the reference ${t.reference}.`,
        };
      },
    );
  }

  async function topUpPage(req: Request, res: Response, extra: { notice?: string } = {}) {
    const denied = refusal(res, false);
    if (denied) return refusalPage(kit, res, denied);
    const caller = callerOf(sessionOf(res));
    const id = String(req.params.id);
    if (!isUuid(id)) return refusalPage(kit, res, topUpNotFound());
    const [{ topUp: t }, options] = await Promise.all([
      call(() => billing.getTopUp({ caller, id })),
      call(() => billing.getTopUpOptions({ caller })),
    ]);
    if (!t) throw new Error("billing answered without the top-up");
    const cur = t.requested?.currency;
    const bank = t.method === TopUpMethod.BANK_TRANSFER;
    const body = html`${facts([
      ["Method", methodWord(t)],
      ["Status", statusWord(t)],
      ["Amount asked", money(t.requested?.amount, cur)],
      ["Received and credited", t.received ? money(t.received.amount, cur) : undefined],
      ["Reference", bank ? html`<strong class="mono">${t.reference}</strong>` : undefined],
      ["Asked on", when(t.createdAt)],
      ["Credited on", t.creditedAt ? when(t.creditedAt) : undefined],
      ["Refunded", t.refunded ? money(t.refunded.amount, cur) : undefined],
    ])}
${
  bank && t.status === TopUpStatus.PENDING
    ? html`<h2>How to pay</h2>
<p>Transfer <strong>${money(t.requested?.amount, cur)}</strong> to the account below and quote the reference <strong class="mono">${t.reference}</strong>, exactly, so we can match your payment.</p>
<p class="mono">${options.bankDetails}</p>
<p class="hint">The credit appears on your balance once we have received the money. If a different amount arrives, what arrived is credited.</p>`
    : ""
}
${
  t.checkoutUrl
    ? html`<p><a class="button" href="${t.checkoutUrl}">Continue to the card payment page</a></p>
<p class="hint">You pay on our card processor's page and come back here afterwards.</p>`
    : ""
}
${
  !bank && t.status === TopUpStatus.PENDING && may(sessionOf(res), ACT.cancel)
    ? html`<p>${buttonForm(`${BASE}/${t.id}/cancel`, "Cancel this card payment", sessionOf(res).csrfToken, { danger: true })}</p>
<p class="hint">Only if you do not mean to pay: the payment page then stops taking payment. A payment already made is credited all the same.</p>`
    : ""
}
<p><a href="${BASE}">Add more credit</a> · <a href="/portal/balance">Balance and transactions</a></p>`;
    kit.render(res, bank ? `Bank transfer ${t.reference}` : "Card top-up", body, {
      ...(await doneOf(kit, req, res)),
      ...(extra.notice ? { notice: extra.notice } : {}),
    });
  }

  page(kit, router, `${ROUTE}/:id`, (req, res) => topUpPage(req, res));

  // Stripe sends the browser back here (its cancel URL too: a plain link it follows). Credit comes
  // only from Stripe's signed event, never from this page, and a GET changes nothing: a return
  // page opened in another tab, a prefetch or a reload must not cancel a payment in progress. The
  // customer cancels with the page's form (a POST, below).
  page(kit, router, `${ROUTE}/:id/return`, async (req, res) => {
    const denied = refusal(res, false);
    if (denied) return refusalPage(kit, res, denied);
    const caller = callerOf(sessionOf(res));
    const id = String(req.params.id);
    if (!isUuid(id)) return refusalPage(kit, res, topUpNotFound());
    const { topUp } = await call(() => billing.getTopUp({ caller, id }));
    const status = topUp?.status;
    return topUpPage(req, res, {
      notice:
        status === TopUpStatus.CREDITED
          ? "Thank you: the payment is confirmed and the credit is on your balance."
          : status === TopUpStatus.CANCELLED
            ? "This card payment was cancelled; nothing was charged."
            : req.query.result === "cancelled"
              ? "You left the card payment page without paying. The payment is still open: continue to pay, or cancel it below."
              : "Thank you: the credit appears on your balance as soon as the card processor confirms the payment (usually within a minute).",
    });
  });

  // Cancelling expires the checkout at Stripe (CancelCardTopUp), so an abandoned payment page
  // cannot be paid later; a session paid meanwhile cannot be expired and is credited as usual.
  action(kit, router, ACT.cancel, { back: (req) => `${BASE}/${topUpIdOf(req)}` }, async (req, res) => {
    const denied = refusal(res, false);
    if (denied) throw denied;
    const id = topUpIdOf(req);
    if (!id) throw topUpNotFound();
    const { topUp } = await call(() => billing.cancelCardTopUp({ caller: callerOf(sessionOf(res)), id }));
    return {
      location: `${BASE}/${id}`,
      ...(topUp?.status === TopUpStatus.CANCELLED
        ? { notice: "The card payment was cancelled; nothing was charged." }
        : { error: "This payment could not be cancelled any more; it is shown below." }),
    };
  });
}

const topUpIdOf = (req: Request) => {
  const id = String(req.params.id);
  return isUuid(id) ? id : "";
};
const topUpNotFound = () =>
  new Refused(404, { success: false, error: "Top-up not found", code: "NOT_FOUND" });

const methodWord = (t: TopUp) => (t.method === TopUpMethod.CARD ? "Card" : "Bank transfer");

function statusWord(t: TopUp): Html {
  const word = enumWord(TopUpStatusSchema, t.status) || "pending";
  return html`<span class="badge badge-${word}">${word}</span>${t.disputed ? " (disputed)" : ""}`;
}
