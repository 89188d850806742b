import type { Logger, Sql } from "@hb/platform";
import type { AccountLookup } from "../account-lookup.ts";
import { money } from "../money.ts";
import type { PaymentHandlers } from "./deps.ts";
import { createPaymentHandlers } from "./handlers.ts";
import { stripeProvider } from "./stripe-driver.ts";

interface PaymentsSettings {
  STRIPE_SECRET_KEY?: string;
  STRIPE_WEBHOOK_SECRET?: string;
  STRIPE_API_BASE?: string;
  TOP_UP_MIN: string;
  TOP_UP_MAX: string;
  BANK_TRANSFER_DETAILS: string;
  RPC_TIMEOUT_MS: number;
}

/** The top-up handlers with the card provider the configuration names (Stripe, or none). */
export function createPayments(
  sql: Sql,
  cfg: PaymentsSettings,
  log: Logger,
  /** Auth's account facts: the staff member confirming a transfer is checked there. */
  accounts: AccountLookup,
): PaymentHandlers {
  const stripe =
    cfg.STRIPE_SECRET_KEY && cfg.STRIPE_WEBHOOK_SECRET
      ? stripeProvider({
          secretKey: cfg.STRIPE_SECRET_KEY,
          webhookSecret: cfg.STRIPE_WEBHOOK_SECRET,
          apiBase: cfg.STRIPE_API_BASE,
          timeoutMs: cfg.RPC_TIMEOUT_MS,
        })
      : undefined;
  if (Boolean(cfg.STRIPE_SECRET_KEY) !== Boolean(cfg.STRIPE_WEBHOOK_SECRET)) {
    log.warn("card payments are off: STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET must both be set");
  }
  return createPaymentHandlers({
    sql,
    log,
    card: stripe,
    limits: { min: money(cfg.TOP_UP_MIN), max: money(cfg.TOP_UP_MAX) },
    bankDetails: cfg.BANK_TRANSFER_DETAILS,
    accounts,
  });
}
