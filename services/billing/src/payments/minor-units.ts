import type { Units } from "../money.ts";

/**
 * Card providers count money in a currency's smallest unit (cents; whole yen). Stripe's list of
 * zero-decimal currencies; every other currency it takes has two decimals in its API (its
 * three-decimal ones are refused below, where a top-up is asked for).
 */
const ZERO_DECIMAL = new Set([
  "BIF",
  "CLP",
  "DJF",
  "GNF",
  "JPY",
  "KMF",
  "KRW",
  "MGA",
  "PYG",
  "RWF",
  "UGX",
  "VND",
  "VUV",
  "XAF",
  "XOF",
  "XPF",
]);
const THREE_DECIMAL = new Set(["BHD", "JOD", "KWD", "OMR", "TND"]);

/** Decimals a card amount may have in `currency`; undefined for currencies cards are not offered in. */
export function cardDecimals(currency: string): number | undefined {
  const c = currency.toUpperCase();
  if (THREE_DECIMAL.has(c) || !/^[A-Z]{3}$/.test(c)) return undefined;
  return ZERO_DECIMAL.has(c) ? 0 : 2;
}

/** Units (ten-thousandths) per smallest unit of the currency. */
const unitsPerMinor = (decimals: number): bigint => 10n ** BigInt(4 - decimals);

/** The amount in the currency's smallest unit; undefined when it has more decimals than that unit. */
export function toMinor(amount: Units, currency: string): number | undefined {
  const d = cardDecimals(currency);
  if (d === undefined) return undefined;
  const per = unitsPerMinor(d);
  if (amount % per !== 0n) return undefined;
  return Number(amount / per);
}

/** A provider's smallest-unit integer as exact units. */
export function fromMinor(minor: number, currency: string): Units | undefined {
  const d = cardDecimals(currency);
  if (d === undefined || !Number.isSafeInteger(minor)) return undefined;
  return BigInt(minor) * unitsPerMinor(d);
}
