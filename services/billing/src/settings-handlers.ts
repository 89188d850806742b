import type { Sql } from "@hb/platform";
import { readBillingSettings, setAutoPay, updateBillingSettings } from "./billing-settings.ts";
import type { BillingHandlers } from "./handlers.ts";

/** Staff RPCs of the recurring cycle's settings; the contract bounds every value. */
export function createSettingsHandlers(sql: Sql): BillingHandlers {
  return {
    async adminGetBillingSettings() {
      return { settings: await readBillingSettings(sql) };
    },
    async adminUpdateBillingSettings(req) {
      return {
        settings: await updateBillingSettings(sql, {
          renewalLeadDays: req.renewalLeadDays,
          suspendGraceDays: req.suspendGraceDays,
          terminateGraceDays: req.terminateGraceDays,
        }),
      };
    },
    async adminSetAccountBilling(req) {
      await setAutoPay(sql, req.customerId, req.autoPay);
      return { customerId: req.customerId, autoPay: req.autoPay };
    },
  };
}
