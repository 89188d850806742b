import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import type { KeyEntry, KeySettings } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import { decideKey, type KeyNeed, type KeyRefusal, unauthenticatedRefusal } from "@hb/platform/key-decision";
import type { WindowCount } from "@hb/platform/rate-window";

export type Need = KeyNeed;
export type Refusal = KeyRefusal;

/** A key that is not (or not yet known to be) authentic: the switch decides the code. */
export const unauthenticated = (settings: KeySettings): Refusal =>
  unauthenticatedRefusal(settings.customerApiEnabled);

/** 00:00 UTC of the key's last day has passed by more than that day. */
export function expired(entry: KeyEntry, nowMs: number): boolean {
  if (!entry.expiresOn) return false;
  return nowMs >= (Number(entry.expiresOn.seconds) + 86_400) * 1000;
}

/**
 * The key check of an authentic, counted key from the key table: its facts, decided by the
 * platform's decideKey (the same function auth.Verify asks). Signed (reseller) routes are not
 * checked here: they go to auth, and decideKey refuses them without auth's reseller facts.
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
  return decideKey(
    {
      customerApiEnabled: settings.customerApiEnabled,
      inventoryModule: settings.inventoryModule,
      vpsModule: settings.vpsModule,
      revoked: entry.revoked,
      expired: expired(entry, nowMs),
      ipAllowlist: entry.ipAllowlist,
      sourceIp,
      scopes: entry.scopes,
      permissions,
      accountSuspended: entry.accountStatus === CustomerStatus.SUSPENDED,
      window,
      nowMs,
    },
    need,
  );
}
