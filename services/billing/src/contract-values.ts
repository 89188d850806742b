import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { MoneySchema } from "@hb/contracts/hb/platform/v1/money_pb";
import { formatMoney, money, type Units } from "./money.ts";

/** An exact amount as the contract carries it: 4-decimal string with its currency. */
export const moneyOut = (amount: Units | string, currency: string): MessageInitShape<typeof MoneySchema> => ({
  currency,
  amount: formatMoney(typeof amount === "string" ? money(amount) : amount),
});

/** An instant as a Timestamp; unset for a missing one. */
export function timeOut(at: Date): Timestamp;
export function timeOut(at: Date | null | undefined): Timestamp | undefined;
export function timeOut(at: Date | null | undefined): Timestamp | undefined {
  return at ? timestampFromDate(at) : undefined;
}
