import { commonConfig, loadConfig } from "@hb/platform";
import { z } from "zod";

export const loadBillingConfig = () =>
  loadConfig({
    ...commonConfig,
    PROVISIONER_INTERVAL_MS: z.coerce.number().int().positive().default(300),
    /** How often hourly services are checked for a due hour. */
    HOURLY_CHARGE_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
  });
