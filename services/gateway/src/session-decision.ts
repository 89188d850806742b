import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import type { Principal } from "@hb/contracts/hb/auth/v1/auth_pb";
import { decideKey, type KeyNeed, type KeyRefusal } from "@hb/platform/key-decision";

/** The company's module switches, as the key table or auth's settings hold them. */
export interface ModuleSwitches {
  inventoryModule?: boolean;
  vpsModule?: boolean;
}

/**
 * Whether a portal session may do what a route needs: the key check's own decision (decideKey,
 * which auth.Verify and the key table ask too), with the session standing in for a key that holds
 * the route's scope, no IP allowlist and an empty hourly window, and with the Customer API switch
 * on: the switch and the hourly limit belong to the API's keys, not to the portal. Module
 * switches, the person's live permissions (auth re-reads them for the session on every page) and
 * suspension are decided as for a key, with the same codes and words.
 *
 * On a signed (reseller) route the session also stands in for the signature, as it does for the
 * key: the partner status is the session's (`partnerStatus`, "" for no partner), so a non-partner
 * is refused, and a pending or suspended partner's writes are refused, exactly as auth refuses a
 * signed request. Without `signed` a reseller route is refused as a non-partner's (decideKey).
 */
export function sessionRefusal(
  p: Principal,
  need: KeyNeed,
  modules: ModuleSwitches | undefined,
  signed?: { partnerStatus: string },
): KeyRefusal | undefined {
  return decideKey(
    {
      customerApiEnabled: true,
      inventoryModule: modules?.inventoryModule ?? false,
      vpsModule: modules?.vpsModule ?? false,
      revoked: false,
      expired: false,
      ipAllowlist: [],
      sourceIp: "",
      scopes: need.scope ? [need.scope] : [],
      permissions: p.permissions,
      accountSuspended: p.accountStatus === CustomerStatus.SUSPENDED,
      window: { count: 0, limit: 1, reset: 0 },
      nowMs: Date.now(),
    },
    need,
    signed ? { partnerStatus: signed.partnerStatus } : undefined,
  );
}
