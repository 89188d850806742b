/**
 * The key check's decision: the spec's order and its refusal messages, in one pure function.
 * The gateway's key table (services/gateway/src/key-check.ts) and auth.Verify
 * (services/auth/src/verify.ts) each gather the facts their own way (a streamed table, one SQL
 * row) and both ask this function, so the two paths cannot answer a request differently.
 * It imports no I/O: the allowlist matcher and the permission helpers only.
 */
import { allowlistPermits } from "./allowlist.ts";
import { holdsAny } from "./permissions.ts";

export interface KeyRefusal {
  code: string;
  message: string;
  /** SCOPE_REQUIRED names the missing scope. */
  scope?: string;
  /** RATE_LIMITED says when the hourly window restarts. */
  retryAfterSeconds?: number;
}

/** Every refusal the key check can give, by name: the one place their codes and messages live. */
export const KEY_REFUSALS = {
  apiDisabled: { code: "FEATURE_DISABLED", message: "The Customer API is disabled" },
  unknownKey: { code: "UNAUTHORIZED", message: "Missing, malformed, unknown, expired or revoked API key" },
  allowlist: { code: "FORBIDDEN", message: "Requests from this address are not allowed for this key" },
  rateLimited: { code: "RATE_LIMITED", message: "Hourly request limit exceeded" },
  inventoryOff: {
    code: "FEATURE_DISABLED",
    message: "Dedicated servers are not available (Inventory module is off)",
  },
  vpsOff: { code: "FEATURE_DISABLED", message: "VPS snapshots are not available (VPS module is off)" },
  notPartner: { code: "FORBIDDEN", message: "Reseller routes are only for reseller partners" },
  scope: (scope: string): KeyRefusal => ({
    code: "SCOPE_REQUIRED",
    message: `This API key lacks the ${scope} scope`,
    scope,
  }),
  badSignature: (problem: string): KeyRefusal => ({ code: "UNAUTHORIZED", message: problem }),
  partnerReadOnly: (status: string): KeyRefusal => ({
    code: "FORBIDDEN",
    message: `The reseller partner profile is ${status}: read access only`,
  }),
  permission: { code: "FORBIDDEN", message: "Your account permissions do not allow this action" },
  suspended: { code: "ACCOUNT_SUSPENDED", message: "The account is suspended: read access only" },
} as const satisfies Record<string, KeyRefusal | ((arg: string) => KeyRefusal)>;

/** The scope of the reseller routes, whose requests are signed and need a partner. */
export const RESELLER_SCOPE = "account";

/** What a route needs of the key and its person. */
export interface KeyNeed {
  /** "" for a request that matched no route (only the key itself is checked). */
  scope: string;
  /** The person must hold one of these; none listed: no permission is needed. */
  permissionsAny: readonly string[];
  write: boolean;
  module?: "inventory" | "vps";
}

/** What is known of an authentic key, its person and account, and the company's switches. */
export interface KeyFacts {
  customerApiEnabled: boolean;
  inventoryModule: boolean;
  vpsModule: boolean;
  revoked: boolean;
  expired: boolean;
  ipAllowlist: readonly string[];
  sourceIp: string;
  scopes: readonly string[];
  /** The person's live permissions (all of them for the owner). */
  permissions: readonly string[];
  accountSuspended: boolean;
  /** This request's count in the key's hourly window (every request of a known key counts). */
  window: { count: number; limit: number; reset: number };
  nowMs: number;
}

/** Auth's extra facts for the reseller routes (the signing secret never leaves auth). */
export interface ResellerFacts {
  /** The account's partner profile status; "" when the account is no partner. */
  partnerStatus: string;
  /** Why the request's signature fails, if it does. */
  signatureProblem?: string;
}

/** A key that is not (or not yet known to be) authentic: the Customer API switch decides the code. */
export const unauthenticatedRefusal = (customerApiEnabled: boolean): KeyRefusal =>
  customerApiEnabled ? KEY_REFUSALS.unknownKey : KEY_REFUSALS.apiDisabled;

/**
 * The spec's check order ("key valid and inside its IP allowlist; scope; permission; suspended
 * account on a write"), with the company switches first, the hourly limit after the allowlist and
 * the module switches before the scope. For the reseller scope, auth adds its steps around the
 * scope check: a non-partner is refused before it, a bad signature and a partner that is not
 * active (on a write) after it. Without `reseller` facts a reseller route is refused as a
 * non-partner's, so a path that cannot check a signature can never let one through.
 */
export function decideKey(facts: KeyFacts, need: KeyNeed, reseller?: ResellerFacts): KeyRefusal | undefined {
  if (!facts.customerApiEnabled) return KEY_REFUSALS.apiDisabled;
  if (facts.revoked || facts.expired) return KEY_REFUSALS.unknownKey;
  if (!allowlistPermits(facts.ipAllowlist, facts.sourceIp)) return KEY_REFUSALS.allowlist;
  if (facts.window.count > facts.window.limit) {
    return {
      ...KEY_REFUSALS.rateLimited,
      retryAfterSeconds: Math.max(1, facts.window.reset - Math.floor(facts.nowMs / 1000)),
    };
  }
  if (need.module === "inventory" && !facts.inventoryModule) return KEY_REFUSALS.inventoryOff;
  if (need.module === "vps" && !facts.vpsModule) return KEY_REFUSALS.vpsOff;
  const resellerRoute = need.scope === RESELLER_SCOPE;
  if (resellerRoute && !reseller?.partnerStatus) return KEY_REFUSALS.notPartner;
  if (need.scope && !facts.scopes.includes(need.scope)) return KEY_REFUSALS.scope(need.scope);
  if (resellerRoute && reseller) {
    if (reseller.signatureProblem) return KEY_REFUSALS.badSignature(reseller.signatureProblem);
    // A pending or suspended partner keeps read access but cannot order or change anything.
    if (need.write && reseller.partnerStatus !== "active") {
      return KEY_REFUSALS.partnerReadOnly(reseller.partnerStatus);
    }
  }
  if (!holdsAny(facts.permissions, need.permissionsAny)) return KEY_REFUSALS.permission;
  if (need.write && facts.accountSuspended) return KEY_REFUSALS.suspended;
  return undefined;
}
