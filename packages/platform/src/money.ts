/**
 * Exact money, the platform's one reading and writing of amounts. An amount is a decimal string
 * with up to 4 decimals whatever the currency (iso-codes.ts), held as bigint ten-thousandths
 * ("units") for arithmetic, so binary floating point never touches a sum. Billing computes with
 * it, the gateway reads request amounts and writes the spec's fields with it, the pages show it.
 */
import { currencyDecimals } from "./currency-decimals.ts";
import { apiError } from "./errors.ts";

export type Units = bigint;

/** Decimals every stored and written amount has. */
export const MONEY_DECIMALS = 4;
const SCALE = 10n ** BigInt(MONEY_DECIMALS);
/** Whole digits an amount may have (billing's numeric(18, 4) columns). */
const MAX_WHOLE_DIGITS = 14;

/**
 * Why a text is not an amount, in the words every edge answers with after the field's name
 * ("amount must have at most 4 decimals"): the API, billing's RPCs and the command lines alike.
 */
export const MONEY_REFUSAL = {
  notDecimal: "must be a decimal number such as 12.5",
  exponent: "must be written as a plain decimal (e.g. 0.01), not in exponent form",
  decimals: `must have at most ${MONEY_DECIMALS} decimals`,
  tooLarge: "is too large",
  notPositive: "must be greater than zero",
} as const;

export type MoneyReading = { ok: true; units: Units } | { ok: false; refusal: string };

const decimal = /^(-)?(\d+)(?:\.(\d+))?$/;
const exponentForm = /^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$/;

/**
 * Reads a decimal amount exactly: an optional minus, digits, and an optional fraction whose digits
 * past the fourth are zeros ("1.50000" is 1.5; "1.00001" is refused). Read exactly as written: a
 * blank around it (" 5") is not an amount (issue 28 §3); a form that wants blanks forgiven trims
 * its own field before asking.
 */
export function readMoney(text: string): MoneyReading {
  const m = decimal.exec(text);
  if (!m) {
    return {
      ok: false,
      refusal: exponentForm.test(text) ? MONEY_REFUSAL.exponent : MONEY_REFUSAL.notDecimal,
    };
  }
  const whole = m[2].replace(/^0+(?=\d)/, "");
  const fraction = (m[3] ?? "").replace(/0+$/, "");
  if (fraction.length > MONEY_DECIMALS) return { ok: false, refusal: MONEY_REFUSAL.decimals };
  if (whole.length > MAX_WHOLE_DIGITS) return { ok: false, refusal: MONEY_REFUSAL.tooLarge };
  const units = BigInt(whole) * SCALE + BigInt(fraction.padEnd(MONEY_DECIMALS, "0"));
  return { ok: true, units: m[1] ? -units : units };
}

/** An amount someone asks to pay or charge: more than zero (a minus sign is refused as such first). */
export function readPositiveMoney(text: string): MoneyReading {
  if (text.startsWith("-")) return { ok: false, refusal: MONEY_REFUSAL.notPositive };
  const read = readMoney(text);
  if (read.ok && read.units === 0n) return { ok: false, refusal: MONEY_REFUSAL.notPositive };
  return read;
}

/**
 * The amount in a request's `field`, or a 400 in the API's words: the violation says the refusal
 * as the gateway does ("must have at most 4 decimals"), the message names the field before it.
 * `read` is readPositiveMoney for amounts to pay.
 */
export function requestedMoney(text: string, field: string, read = readMoney): Units {
  const r = read(text);
  if (!r.ok)
    throw apiError("BAD_REQUEST", `${field} ${r.refusal}`, { violations: [{ field, message: r.refusal }] });
  return r.units;
}

/** The amount, or undefined when the text is not one. */
export function parseMoney(text: string): Units | undefined {
  const read = readMoney(text);
  return read.ok ? read.units : undefined;
}

/** An amount the platform wrote itself (a column, a contract field): not being one is a bug. */
export function money(text: string): Units {
  const v = parseMoney(text);
  if (v === undefined) throw new Error(`not an exact amount: "${text}"`);
  return v;
}

/** What formatMoney writes, for schemas that describe it. */
export const FORMATTED_MONEY = /^-?\d+\.\d{4}$/;

/** The spec's decimal string: always 4 decimals, sign kept ("12.5000", "-0.0040"). */
export function formatMoney(units: Units): string {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  return `${neg ? "-" : ""}${abs / SCALE}.${(abs % SCALE).toString().padStart(MONEY_DECIMALS, "0")}`;
}

/**
 * For the spec's numeric fields only (document.total, credit_balance, …). The decimal has at most
 * 4 fractional digits, so the number is the closest double to it and JSON prints those digits back.
 */
export const toNumber = (units: Units): number => Number(formatMoney(units));

/**
 * An amount for people to read: the currency's own decimals at least, more only when the amount has
 * them ("12.50 EUR", "1200 JPY", "0.0070 EUR" as "0.007 EUR"); no grouping, so it reads back exactly.
 */
export function displayMoney(units: Units, currency = ""): string {
  const [whole, fraction] = formatMoney(units).split(".");
  const shown = fraction.replace(/0+$/, "").padEnd(currency ? currencyDecimals(currency) : 2, "0");
  return `${whole}${shown ? `.${shown}` : ""}${currency ? ` ${currency}` : ""}`;
}
