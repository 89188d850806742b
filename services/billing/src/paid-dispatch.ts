/**
 * What paying a document sets in motion, by the document's purpose. Features register here (an
 * order becomes active, a renewal extends the paid-up date, an upgrade executes, an add-on starts
 * its cycle), so the payment engine (documents.ts) calls them without importing any feature module.
 */
import type { TxSql } from "@hb/platform";
import type { DocumentRow, OrderRow, ServiceRow } from "./records.ts";

/** What the payment engine knows of the payment when it dispatches. */
export interface PaidPayment {
  /**
   * The invoice that records the payment: the document itself, or the invoice a paid proforma
   * converts into, which the engine may still be writing in the same round trip.
   */
  invoiceId: string;
}

/** What a handler hands back to whoever took the payment. */
export interface PaidOutcome {
  /** The order the payment settled, as the handler left it. */
  order?: OrderRow;
  /** The order's services the payment started, as the handler left them, oldest first. */
  services?: ServiceRow[];
}

// biome-ignore lint/suspicious/noConfusingVoidType: most handlers hand nothing back and are plain `async` functions, typed Promise<void>
type HandedBack = PaidOutcome | undefined | void;

/**
 * Runs inside the payment's transaction once the document is paid in full. A handler that sends
 * its first statements before its first `await` has them go in the engine's round trip.
 */
export type PaidHandler = (
  tx: TxSql,
  ns: string,
  doc: DocumentRow,
  payment: PaidPayment,
) => Promise<HandedBack>;
/** Runs before money moves; throws (e.g. CONFLICT) when the document may not be paid now. */
export type PayableCheck = (tx: TxSql, doc: DocumentRow) => Promise<void>;

const paid = new Map<string, PaidHandler[]>();
const payable = new Map<string, PayableCheck[]>();

export function onDocumentPaid(purpose: string, handler: PaidHandler) {
  paid.set(purpose, [...(paid.get(purpose) ?? []), handler]);
}

export function onDocumentPayable(purpose: string, check: PayableCheck) {
  payable.set(purpose, [...(payable.get(purpose) ?? []), check]);
}

/**
 * The purpose's handlers, one after another; the first is called in the caller's tick, so the
 * statements it sends at once share the caller's round trip. `payment` defaults to the document
 * being its own invoice.
 */
export async function dispatchPaid(
  tx: TxSql,
  ns: string,
  doc: DocumentRow,
  payment: PaidPayment = { invoiceId: doc.id },
): Promise<PaidOutcome> {
  const outcome: PaidOutcome = {};
  for (const h of paid.get(doc.purpose) ?? []) Object.assign(outcome, await h(tx, ns, doc, payment));
  return outcome;
}

export async function checkPayable(tx: TxSql, doc: DocumentRow) {
  for (const c of payable.get(doc.purpose) ?? []) await c(tx, doc);
}

/**
 * Purposes whose payment runs code of a feature (a handler or a check above): a payment of a
 * document of any other purpose moves money and marks the document, and nothing else.
 */
export const purposesWithHandlers = (): string[] => [...new Set([...paid.keys(), ...payable.keys()])];
