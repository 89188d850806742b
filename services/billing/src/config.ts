import { commonConfig, loadConfig, testSwitches } from "@hb/platform";
import { z } from "zod";
import { paymentsConfig } from "./payments/config.ts";

export const loadBillingConfig = () =>
  loadConfig({
    ...commonConfig,
    PROVISIONER_INTERVAL_MS: z.coerce.number().int().positive().default(300),
    /** How often time-driven work runs: hourly charges, end-of-term cancellations. */
    HOURLY_CHARGE_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
    /** The most instants one due pass walks through (due.ts); the next pass resumes. */
    DUE_CATCH_UP_STEPS: z.coerce.number().int().positive().default(500),
    /**
     * Tests and `npm start` only (refused in production): lets AdminAdvanceClock move billing's
     * clock forward. The offset is kept in billing's database, so a restart keeps it (clock.ts).
     */
    BILLING_CLOCK_CONTROL: testSwitches.BILLING_CLOCK_CONTROL.schema,
    ...paymentsConfig,
  });
