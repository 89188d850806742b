/**
 * Which services may call which service definition. Internal calls are authenticated by mutual
 * TLS (service-identity.ts); this table authorises them, per service definition and never per
 * method name, which is why each backend splits its RPCs into definitions by caller (customer-
 * facing, staff, service-to-service). A definition missing here is refused to everyone, and
 * serving one is a start-up error, so a new definition cannot go out open by mistake.
 */
import type { DescService } from "@bufbuild/protobuf";
import { Code, type ConnectError } from "@connectrpc/connect";
import { connectError } from "./connect-error.ts";
import type { Logger } from "./log.ts";
import type { ServiceIdentity } from "./service-identity.ts";

const anyone = "*";

export const ALLOWED_CALLERS: Readonly<Record<string, readonly (ServiceIdentity | typeof anyone)[]>> = {
  // Probes: any holder of a certificate from the platform's CA.
  "grpc.health.v1.Health": [anyone],
  // The admin command also reads what customers see (a person, products, an account).
  "hb.auth.v1.AuthService": ["gateway", "admin"],
  // Customers, people, keys, partners and settings: the admin command and the gateway's pages
  // (the portal's key and team pages act for a signed-in person, the admin panel for staff; auth
  // checks the staff member itself on every staff write).
  "hb.auth.v1.AuthStaffService": ["admin", "admin-panel", "portal"],
  // Sign-in, sessions and set-password links of the pages; the admin command issues links.
  "hb.auth.v1.PortalService": ["admin-panel", "portal", "admin"],
  "hb.auth.v1.PartnerLookupService": ["webhooks"],
  // An account's currency and people, for billing's staff operations (no secrets).
  "hb.auth.v1.AccountLookupService": ["billing"],
  // The key table every gateway replica holds (no secrets) and its acknowledgements.
  "hb.auth.v1.KeyDistributionService": ["gateway"],
  "hb.billing.v1.BillingService": ["gateway", "admin"],
  "hb.billing.v1.BillingStaffService": ["admin"],
  // Credit top-ups: the portal's Add credit page acts for the signed-in person; bank transfers are
  // confirmed by staff (admin panel, admin command); the payment provider's webhook comes through
  // the gateway's public endpoint.
  "hb.billing.v1.TopUpService": ["portal"],
  "hb.billing.v1.TopUpStaffService": ["admin-panel", "admin"],
  "hb.billing.v1.PaymentEventService": ["gateway"],
  // The support desk's customer view and its credit adjustment, which names the staff member:
  // staff identities only (never the portal's, whose pages act for customers).
  "hb.billing.v1.BillingDeskService": ["admin-panel", "admin"],
  "hb.compute.v1.ComputeService": ["gateway"],
  // Web consoles: the gateway relays the browser's WebSocket (portal page or API ticket) to them.
  "hb.compute.v1.ComputeConsoleService": ["gateway"],
  "hb.compute.v1.ComputeProvisioningService": ["billing"],
  "hb.compute.v1.ComputeStaffService": ["admin"],
  // The support desk's power actions on a customer's machine.
  "hb.compute.v1.ComputeDeskService": ["admin-panel", "admin"],
  // A partner's URL: the API, the portal's Reseller page, the admin panel and the admin command.
  "hb.webhooks.v1.WebhooksService": ["gateway", "admin-panel", "portal", "admin"],
  // Deliveries (the portal's Reseller page lists the signed-in partner's own) and the programme's
  // settings (staff).
  "hb.webhooks.v1.WebhooksStaffService": ["admin", "admin-panel", "portal"],
};

/** Decides each call to one service definition: undefined to go ahead, else the refusal. */
export type CallerCheck = (caller: string | undefined, method: string) => ConnectError | undefined;

export function callerCheck(
  desc: DescService,
  log: Logger,
  table: Readonly<Record<string, readonly string[]>> = ALLOWED_CALLERS,
): CallerCheck {
  const allowed = table[desc.typeName];
  if (!allowed) throw new Error(`${desc.typeName} has no entry in the allow-list (allow-list.ts)`);
  const everyone = allowed.includes(anyone);
  const callers = new Set(allowed);
  return (caller, method) => {
    if (caller !== undefined && (everyone || callers.has(caller))) return undefined;
    // Names and the method only: never a certificate, key or request.
    log.warn("rpc refused: caller not allowed", { method, caller: caller ?? "(no certificate)" });
    return connectError(
      `${caller ?? "a caller without a certificate"} may not call ${desc.typeName}`,
      Code.PermissionDenied,
    );
  };
}
