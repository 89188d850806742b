import { badRequest } from "./errors.ts";

/**
 * The currencies the platform bills in: ISO 4217 codes, upper case. Money is kept to 4 decimals
 * whatever the currency, so any of them fits; the list is what the company has decided to sell in,
 * not every code ISO defines. Add a code here to sell in another.
 */
export const BILLING_CURRENCIES = [
  "EUR",
  "USD",
  "GBP",
  "CHF",
  "CAD",
  "AUD",
  "NZD",
  "SEK",
  "NOK",
  "DKK",
  "PLN",
  "CZK",
  "HUF",
  "ISK",
  "RON",
  "JPY",
  "SGD",
  "HKD",
  "INR",
  "BRL",
  "ZAR",
] as const;

const currencies = new Set<string>(BILLING_CURRENCIES);

/** The code itself when the platform bills in it; else BAD_REQUEST naming `field`. */
export function billingCurrency(field: string, code: string): string {
  if (currencies.has(code)) return code;
  if (currencies.has(code.toUpperCase())) {
    throw badRequest(
      field,
      `${field} must be an upper-case ISO 4217 code: ${code.toUpperCase()}, not ${code}`,
    );
  }
  throw badRequest(
    field,
    `${field} must be one of the currencies the platform bills in (ISO 4217): ${BILLING_CURRENCIES.join(", ")}`,
  );
}

// ISO 3166-1 alpha-2: the 249 officially assigned codes (no user-assigned ones such as XK or ZZ).
const COUNTRIES = new Set(
  `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT
  BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH
  ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT
  HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS
  LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI
  NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG
  SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG
  UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW`.split(/\s+/),
);

export const COUNTRY_CODE_COUNT = COUNTRIES.size;

/** The code itself when it is an ISO 3166-1 alpha-2 country code (upper case); else BAD_REQUEST. */
export function countryCode(field: string, code: string): string {
  if (COUNTRIES.has(code)) return code;
  throw badRequest(
    field,
    `${field} must be an ISO 3166-1 alpha-2 country code (two letters, e.g. DE); ${code} is not one`,
  );
}
