import { FORMATTED_MONEY } from "@hb/platform/money";
import { z } from "zod";
import { BILLING_CYCLE_WORDS, without } from "./words.ts";

/** An amount as the spec writes billing amounts: a decimal string with 4 decimals ("12.5000"). */
export const decimal4 = z
  .string()
  .regex(FORMATTED_MONEY)
  .meta({ description: "Decimal string with 4 decimals" });

/** ISO 4217 code; empty only where the account has no balance yet. */
export const currency = z.string().meta({ description: "ISO 4217 currency code" });

/** Billing cycles a price or a service can have. */
export const CYCLES = without(BILLING_CYCLE_WORDS, "one_time");
export const cycle = z.enum(CYCLES);
