/**
 * Staff's side of top-ups (TopUpStaffService): bank transfers listed and confirmed
 * (transfer-confirmation.ts), card payments to look at (card-review.ts).
 */
import { TopUpStatusSchema } from "@hb/contracts/hb/billing/v1/payments_pb";
import { enumWord, PAGE_SIZE } from "@hb/platform";
import { listPage } from "../list-query.ts";
import { cardReview } from "./card-review.ts";
import type { PaymentHandlers, PaymentsDeps } from "./deps.ts";
import type { TopUpRow } from "./top-up-row.ts";
import { topUpOut } from "./top-ups.ts";
import { confirmBankTransfer } from "./transfer-confirmation.ts";

export function staffTopUps(d: PaymentsDeps): PaymentHandlers {
  const { sql } = d;
  return {
    async listBankTransfers(req) {
      const status = enumWord(TopUpStatusSchema, req.status) || null;
      // Pending ones oldest first (the order they are worked through), others newest first.
      const { rows, total } = await listPage<TopUpRow>(sql, req, PAGE_SIZE.machines, {
        select: sql`select *`,
        from: sql`from top_ups where method = 'bank_transfer' and (${status}::text is null or status = ${status})`,
        orderBy: sql`case when status = 'pending' then 0 else 1 end,
          case when status = 'pending' then created_at end asc, created_at desc, id`,
      });
      return { transfers: rows.map(topUpOut), total };
    },

    confirmBankTransfer: (req, ctx) => confirmBankTransfer(sql, d, req, ctx),

    // Staff: card payments to look at --------------------------------------------------------
    ...cardReview(sql),
  };
}
