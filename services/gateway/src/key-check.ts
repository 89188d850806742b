import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import type { KeyEntry, KeySettings } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import { allowlistPermits, holdsAny } from "@hb/platform";
import type { WindowCount } from "@hb/platform/rate-window";

export interface Need {
  scope: string;
  permissionsAny: readonly string[];
  write: boolean;
  module?: "inventory" | "vps";
}

export interface Refusal {
  code: string;
  message: string;
  scope?: string;
  retryAfterSeconds?: number;
}

const refuse = (code: string, message: string, scope?: string): Refusal => ({ code, message, scope });
export const UNKNOWN_KEY = "Missing, malformed, unknown, expired or revoked API key";

/** A key that is not (or not yet known to be) authentic: the switch decides the code. */
export const unauthenticated = (settings: KeySettings): Refusal =>
  settings.customerApiEnabled
    ? refuse("UNAUTHORIZED", UNKNOWN_KEY)
    : refuse("FEATURE_DISABLED", "The Customer API is disabled");

/** 00:00 UTC of the key's last day has passed by more than that day. */
export function expired(entry: KeyEntry, nowMs: number): boolean {
  if (!entry.expiresOn) return false;
  return nowMs >= (Number(entry.expiresOn.seconds) + 86_400) * 1000;
}

/**
 * The key check of an authentic, counted key, in auth.Verify's order (services/auth/src/verify.ts):
 * the same codes and messages. Signed (reseller) routes are not checked here: they go to auth.
 */
export function checkKey(
  entry: KeyEntry,
  settings: KeySettings,
  need: Need,
  permissions: readonly string[],
  sourceIp: string,
  window: WindowCount,
  nowMs: number,
): Refusal | undefined {
  if (!settings.customerApiEnabled) return refuse("FEATURE_DISABLED", "The Customer API is disabled");
  if (entry.revoked || expired(entry, nowMs)) return refuse("UNAUTHORIZED", UNKNOWN_KEY);
  if (!allowlistPermits(entry.ipAllowlist, sourceIp)) {
    return refuse("FORBIDDEN", "Requests from this address are not allowed for this key");
  }
  if (window.count > window.limit) {
    return {
      ...refuse("RATE_LIMITED", "Hourly request limit exceeded"),
      retryAfterSeconds: Math.max(1, window.reset - Math.floor(nowMs / 1000)),
    };
  }
  if (need.module === "inventory" && !settings.inventoryModule) {
    return refuse("FEATURE_DISABLED", "Dedicated servers are not available (Inventory module is off)");
  }
  if (need.module === "vps" && !settings.vpsModule) {
    return refuse("FEATURE_DISABLED", "VPS snapshots are not available (VPS module is off)");
  }
  if (need.scope && !entry.scopes.includes(need.scope)) {
    return refuse("SCOPE_REQUIRED", `This API key lacks the ${need.scope} scope`, need.scope);
  }
  if (!holdsAny(permissions, need.permissionsAny)) {
    return refuse("FORBIDDEN", "Your account permissions do not allow this action");
  }
  if (need.write && entry.accountStatus === CustomerStatus.SUSPENDED) {
    return refuse("ACCOUNT_SUSPENDED", "The account is suspended: read access only");
  }
  return undefined;
}
