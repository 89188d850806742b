/**
 * A customer's pay of an invoice from credit in one statement: the database function
 * pay_from_credit (migration 021) takes the key's lock, reads its stored answer, locks the balance
 * and the document, checks, and moves the money, writes the ledger entry, marks the document and
 * keeps the key's answer, in one round trip and one implicit transaction. Round trips are the pay
 * path's largest cost on both sides (docs/benchmarks.md, issue 31 §2), so the three of the
 * engine's transaction (begin and locks; the payment; the key's answer and commit) become one.
 *
 * A document whose payment sets something in motion (a proforma, or a purpose with handlers in
 * paid-dispatch.ts) is answered 'engine' with nothing written, and is paid by the engine
 * (documents.ts) as before.
 */
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { type PayDocumentResponse, PayDocumentResponseSchema } from "@hb/contracts/hb/billing/v1/billing_pb";
import { notFound, type Sql } from "@hb/platform";
import { currencyMismatch } from "./account-currency.ts";
import { clock } from "./clock.ts";
import { moneyOut } from "./contract-values.ts";
import { alreadySettled, amountNotPositive, amountOverDue } from "./documents.ts";
import { type GroupCommit, groupCommit } from "./group-commit.ts";
import { keyLockName, keyReused, keyTooLong } from "./idempotency.ts";
import { insufficientCredit } from "./ledger.ts";
import { formatMoney, money, type Units } from "./money.ts";
import { purposesWithHandlers } from "./paid-dispatch.ts";
import type { DocumentRow } from "./records.ts";
import { documentOut } from "./records-out.ts";

export interface OneStatementPay {
  personId: string;
  customerId: string;
  documentId: string;
  kind: "invoice" | "proforma";
  /** The requested part, already checked as an amount; undefined pays what is due. */
  amount?: { units: Units; currency: string };
  operation: string;
  idempotencyKey: string;
  requestHash: string;
}

interface PayArgs extends OneStatementPay {
  amountText: string | null;
  lock: string;
  now: Date;
  enginePurposes: string[];
}

interface PayOutcome {
  outcome: string;
  body: string | null;
}

/** Pays waiting at the same moment are made in one statement and its commit (group-commit.ts). */
export type PayGroup = GroupCommit<PayArgs, PayOutcome>;

export function payGroup(sql: Sql): PayGroup {
  return groupCommit<PayArgs, PayOutcome>(
    sql,
    // pay_from_credit once per pay, in the group's order (a lone pay is a group of one), the
    // outcomes gathered in one row (group-commit.ts says why).
    async (q, pays) => {
      // json, not text[]: postgres.js reads a NULL element of a text[] as the text 'NULL'.
      const [r] = await q<{ outcomes: [string, string | null][] }[]>`
        select json_agg(json_build_array(p.outcome, p.body) order by a.n) as outcomes
        from unnest(
          ${pays.map((a) => a.personId)}::uuid[], ${pays.map((a) => a.customerId)}::uuid[],
          ${pays.map((a) => a.documentId)}::uuid[], ${pays.map((a) => a.kind)}::text[],
          ${pays.map((a) => a.amountText)}::numeric[], ${pays.map((a) => a.amount?.currency ?? "")}::text[],
          ${pays.map((a) => a.lock)}::text[], ${pays.map((a) => a.operation)}::text[],
          ${pays.map((a) => a.idempotencyKey)}::text[], ${pays.map((a) => a.requestHash)}::text[],
          ${pays.map((a) => a.now.toISOString())}::timestamptz[]
        ) with ordinality
          as a(person, customer, document, kind, amount, amount_currency, lock_name, operation, key, hash, at, n)
        cross join lateral pay_from_credit(
          a.person, a.customer, a.document, a.kind, a.amount, a.amount_currency, a.lock_name, a.operation, a.key,
          a.hash, a.at, ${pays[0].enginePurposes}::text[]) p`.execute();
      return r.outcomes.map(([outcome, body]) => ({ outcome, body }));
    },
    { orderOf: (a) => a.personId },
  );
}

/** What pay_from_credit stores and answers for a payment: the answer is made from it. */
interface PaidRow {
  credit: string;
  balance: string;
  remaining: string;
  fully_paid: boolean;
  document: Omit<DocumentRow, "created_at" | "due_date" | "paid_at"> & {
    created_at: string;
    due_date: string;
    paid_at: string | null;
  };
}

/**
 * Pays in one statement; undefined when the document must be paid by the engine (nothing was
 * written then). Throws the engine's refusals, with the same codes and messages.
 */
export async function payInOneStatement(
  pays: PayGroup,
  p: OneStatementPay,
): Promise<PayDocumentResponse | undefined> {
  if (p.idempotencyKey.length > 255) throw keyTooLong();
  const key = p.idempotencyKey;
  const r = await pays.run({
    ...p,
    amountText: p.amount ? formatMoney(p.amount.units) : null,
    lock: key ? keyLockName(p.personId, p.operation, key) : "",
    // Billing's clock when the request came, not when its group runs.
    now: clock.now(),
    enginePurposes: purposesWithHandlers(),
  });
  const body = r.body === null ? {} : (JSON.parse(r.body) as Record<string, string>);
  switch (r.outcome) {
    case "paid":
    case "replay":
      return storedAnswer(body);
    case "engine":
      return undefined;
    case "key_reused":
      throw keyReused();
    case "not_found":
      throw notFound(p.kind === "invoice" ? "Invoice" : "Proforma");
    case "amount_currency":
      throw currencyMismatch(body.currency, p.amount?.currency ?? "", "amount");
    case "balance_currency":
      throw currencyMismatch(body.currency, body.held);
    case "conflict":
      throw alreadySettled(body.kind, body.status);
    case "amount_zero":
      throw amountNotPositive();
    case "amount_over":
      throw amountOverDue(money(body.due));
    case "insufficient":
      throw insufficientCredit();
    default:
      throw new Error(`pay_from_credit answered ${r.outcome}`);
  }
}

/**
 * A key's stored answer to a pay: pay_from_credit's {"row": ...}, or the engine's answer as
 * protobuf JSON (documents it paid, and answers stored before the one-statement pay).
 */
export function storedAnswer(stored: unknown): PayDocumentResponse {
  const row = (stored as { row?: PaidRow }).row;
  if (!row) return fromJson(PayDocumentResponseSchema, stored as JsonValue);
  const d = row.document;
  const document: DocumentRow = {
    ...d,
    created_at: new Date(d.created_at),
    due_date: new Date(d.due_date),
    paid_at: d.paid_at === null ? null : new Date(d.paid_at),
  };
  return create(PayDocumentResponseSchema, {
    creditApplied: moneyOut(row.credit, d.currency),
    newBalance: moneyOut(row.balance, d.currency),
    remainingAmount: moneyOut(row.remaining, d.currency),
    fullyPaid: row.fully_paid,
    invoice: documentOut(document),
  });
}
