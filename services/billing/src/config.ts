import { commonConfig, loadConfig } from "@hb/platform";
import { z } from "zod";
import { paymentsConfig } from "./payments/config.ts";

export const loadBillingConfig = () =>
  loadConfig({
    ...commonConfig,
    PROVISIONER_INTERVAL_MS: z.coerce.number().int().positive().default(300),
    /** How often time-driven work runs: hourly charges, end-of-term cancellations. */
    HOURLY_CHARGE_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
    /** Tests only: lets AdminAdvanceClock move billing's clock forward. */
    BILLING_CLOCK_CONTROL: z
      .enum(["true", "false"])
      .default("false")
      .transform((v) => v === "true"),
    ...paymentsConfig,
  });
