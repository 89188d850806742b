/**
 * What paying a document sets in motion, by the document's purpose. Features register here (a
 * renewal extends the paid-up date, an upgrade executes, an add-on starts its cycle), so the
 * payment engine (documents.ts) calls them without importing any feature module.
 */
import type { TxSql } from "@hb/platform";
import type { DocumentRow } from "./records.ts";

/** Runs inside the payment's transaction once the document is paid in full. */
export type PaidHandler = (tx: TxSql, ns: string, doc: DocumentRow) => Promise<void>;
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

export async function dispatchPaid(tx: TxSql, ns: string, doc: DocumentRow) {
  for (const h of paid.get(doc.purpose) ?? []) await h(tx, ns, doc);
}

export async function checkPayable(tx: TxSql, doc: DocumentRow) {
  for (const c of payable.get(doc.purpose) ?? []) await c(tx, doc);
}
