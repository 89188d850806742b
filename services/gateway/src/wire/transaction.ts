import { z } from "zod";
import { pagination, paginationExample } from "./pagination.ts";
import { TRANSACTION_KIND_WORDS } from "./words.ts";

/** One entry of the credit ledger; amount is negative for money leaving the balance. */
export const transaction = z.object({
  id: z.string().meta({ description: "ledger sequence number" }),
  type: z.enum(TRANSACTION_KIND_WORDS),
  amount: z.number(),
  balance_after: z.number(),
  description: z.string(),
  document_id: z.uuid().nullable(),
  created_at: z.iso.datetime(),
});

export const transactionList = z.object({ transactions: z.array(transaction), pagination });

export const transactionListExample = {
  transactions: [
    {
      id: "1187",
      type: "payment",
      amount: -12.5,
      balance_after: 87.5,
      description: "Payment of invoice INV-2026-1042",
      document_id: "0195e3a1-0a1b-7c2d-8e3f-4a5b6c7d8e9f",
      created_at: "2026-11-23T10:05:00.000Z",
    },
  ],
  pagination: paginationExample,
};
