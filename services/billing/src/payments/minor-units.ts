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
/**
 * Stripe's special cases that are zero-decimal for the card networks but still counted in
 * hundredths by its API: since April 2023 an ISK amount must be a multiple of 100 (whole krónur),
 * and Stripe refuses `5.50 ISK` (invalid_charge_amount_no_decimal_compatible).
 */
const WHOLE_IN_HUNDREDTHS = new Set(["ISK"]);

/** How a card amount in a currency is written: decimals it may have, and decimals Stripe's integer counts. */
function cardUnit(currency: string): { charged: number; counted: number } | undefined {
  const c = currency.toUpperCase();
  if (THREE_DECIMAL.has(c) || !/^[A-Z]{3}$/.test(c)) return undefined;
  if (ZERO_DECIMAL.has(c)) return { charged: 0, counted: 0 };
  if (WHOLE_IN_HUNDREDTHS.has(c)) return { charged: 0, counted: 2 };
  return { charged: 2, counted: 2 };
}

/** Decimals a card amount may have in `currency`; undefined for currencies cards are not offered in. */
export function cardDecimals(currency: string): number | undefined {
  return cardUnit(currency)?.charged;
}

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
