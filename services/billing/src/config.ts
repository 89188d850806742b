import { commonConfig, loadConfig } from "@hb/platform";
import { z } from "zod";

export const loadBillingConfig = () =>
  loadConfig({
    ...commonConfig,
    PROVISIONER_INTERVAL_MS: z.coerce.number().int().positive().default(300),
  });
