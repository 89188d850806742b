import { testSwitches } from "@hb/platform";
import { readPositiveMoney } from "@hb/platform/money";
import { z } from "zod";

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v?.trim() ? v.trim() : undefined));

/** A top-up limit: an amount more than zero, in whole cents at most (what a card can be charged). */
const topUpLimit = z.string().refine((text) => {
  const read = readPositiveMoney(text);
  return read.ok && read.units % 100n === 0n;
}, "must be an amount of money greater than zero with at most 2 decimals, e.g. 5.00");

/**
 * Top-ups' settings. Card payments are offered only when both Stripe secrets are set; bank
 * transfers always are. The limits hold for both methods, in the account's own currency.
 */
export const paymentsConfig = {
  STRIPE_SECRET_KEY: optionalText,
  STRIPE_WEBHOOK_SECRET: optionalText,
  /** Another Stripe API host (a test's stand-in), e.g. http://127.0.0.1:12111; refused in production. */
  STRIPE_API_BASE: testSwitches.STRIPE_API_BASE.schema,
  /** The smallest and largest top-up, as decimal strings. */
  TOP_UP_MIN: topUpLimit.default("5.00"),
  TOP_UP_MAX: topUpLimit.default("10000.00"),
  /** What a customer is told to transfer to (shown with the reference). */
  BANK_TRANSFER_DETAILS: z
    .string()
    .default("Account holder: Hosting Platform Ltd · IBAN: GB33 BUKB 2020 1555 5555 55 · BIC: BUKBGB22"),
};
