import type { Transaction } from "@hb/contracts/hb/billing/v1/ledger_pb";
import type { z } from "zod";
import type { transaction } from "../wire/transaction.ts";
import { amountNumber, iso, orNull } from "./contract.ts";
import { transactionKindWords } from "./enums.ts";

/** One entry of the credit ledger. */
export const transactionJson = (t: Transaction): z.infer<typeof transaction> => ({
  id: t.id.toString(),
  type: transactionKindWords.wire(t.kind),
  amount: amountNumber(t.amount),
  balance_after: amountNumber(t.balanceAfter),
  description: t.description,
  document_id: orNull(t.documentId),
  created_at: iso(t.createdAt),
});
