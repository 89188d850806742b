import { customerTopUps } from "./customer-top-ups.ts";
import type { PaymentHandlers, PaymentsDeps } from "./deps.ts";
import { providerEvents } from "./provider-events.ts";
import { staffTopUps } from "./staff-top-ups.ts";

/** The payment services' handlers: customers' top-ups, staff's, and the provider's webhook. */
export function createPaymentHandlers(d: PaymentsDeps): PaymentHandlers {
  return { ...customerTopUps(d), ...staffTopUps(d), ...providerEvents(d) };
}
