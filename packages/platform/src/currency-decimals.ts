/**
 * How many decimals an amount may have in a currency, by the two authorities the platform answers
 * to: ISO 4217 (what a bank moves and what people are shown) and the card provider (what Stripe
 * charges). They mostly agree; currency-decimals.test.ts lists where they do not, and why.
 * Every amount is still kept to 4 decimals (money.ts) whatever the currency.
 */

/** ISO 4217 minor-unit digits of the currencies that do not have two. */
const ISO_DECIMALS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
};

/**
 * Decimals an amount may have in `currency` by ISO 4217: a bank moves no fraction of its minor
 * unit, and an amount is shown with at least these (2 for EUR, 0 for JPY).
 */
export const currencyDecimals = (currency: string): number => ISO_DECIMALS[currency.toUpperCase()] ?? 2;

/**
 * Stripe's list of zero-decimal currencies (its API counts whole units); every other currency it
 * takes has two decimals in its API. Its three-decimal ones are not offered (cardUnit).
 */
const CARD_ZERO_DECIMAL = new Set([
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
const CARD_THREE_DECIMAL = new Set(["BHD", "JOD", "KWD", "OMR", "TND"]);
/**
 * Stripe's special cases that are zero-decimal for the card networks but still counted in
 * hundredths by its API: since April 2023 an ISK amount must be a multiple of 100 (whole krónur),
 * and Stripe refuses `5.50 ISK` (invalid_charge_amount_no_decimal_compatible).
 */
const CARD_WHOLE_IN_HUNDREDTHS = new Set(["ISK"]);

/**
 * How a card amount in `currency` is written: the decimals it may have (`charged`) and the
 * decimals Stripe's integer counts (`counted`); undefined for currencies cards are not offered in.
 */
export function cardUnit(currency: string): { charged: number; counted: number } | undefined {
  const c = currency.toUpperCase();
  if (CARD_THREE_DECIMAL.has(c) || !/^[A-Z]{3}$/.test(c)) return undefined;
  if (CARD_ZERO_DECIMAL.has(c)) return { charged: 0, counted: 0 };
  if (CARD_WHOLE_IN_HUNDREDTHS.has(c)) return { charged: 0, counted: 2 };
  return { charged: 2, counted: 2 };
}

/** Decimals a card amount may have in `currency`; undefined for currencies cards are not offered in. */
export const cardDecimals = (currency: string): number | undefined => cardUnit(currency)?.charged;
