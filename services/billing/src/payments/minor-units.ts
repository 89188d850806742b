import { cardUnit } from "@hb/platform/currency-decimals";
import type { Units } from "../money.ts";

/**
 * Card providers count money in a currency's smallest unit (cents; whole yen): the conversion
 * between that integer and exact units, by the card table of @hb/platform/currency-decimals.
 */

/** Units (ten-thousandths) per 10^-decimals of the currency. */
const unitsPer = (decimals: number): bigint => 10n ** BigInt(4 - decimals);

/** The amount in the provider's integer; undefined when it has more decimals than a card may charge. */
export function toMinor(amount: Units, currency: string): number | undefined {
  const u = cardUnit(currency);
  if (u === undefined || amount % unitsPer(u.charged) !== 0n) return undefined;
  return Number(amount / unitsPer(u.counted));
}

/** A provider's smallest-unit integer as exact units. */
export function fromMinor(minor: number, currency: string): Units | undefined {
  const u = cardUnit(currency);
  if (u === undefined || !Number.isSafeInteger(minor)) return undefined;
  return BigInt(minor) * unitsPer(u.counted);
}
