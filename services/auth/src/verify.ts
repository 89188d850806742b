import type { MessageInitShape } from "@bufbuild/protobuf";
import { Module, type VerifyRequest, type VerifyResponseSchema } from "@hb/contracts/hb/auth/v1/auth_pb";
import { ALL_PERMISSIONS, hashMatches, holdsAny, parseKey, type Sql } from "@hb/platform";
import { countHourly, type WindowCount } from "@hb/platform/rate-window";
import type { Redis } from "@hb/platform/redis";
import { resellerSignatureMatches } from "@hb/webhook-signature";
import { allowlistPermits } from "./allowlist.ts";
import { customerStatusOf } from "./statuses.ts";

type VerifyResult = MessageInitShape<typeof VerifyResponseSchema>;

interface KeyRow {
  customer_api_enabled: boolean;
  hourly_request_limit: number;
  inventory_module: boolean;
  vps_module: boolean;
  key_id: string | null;
  secret_hash: Buffer | null;
  label: string;
  scopes: string[];
  ip_allowlist: string[];
  revoked: boolean;
  expired: boolean;
  person_id: string;
  customer_id: string;
  is_owner: boolean;
  permissions: string[];
  person_name: string;
  person_email: string;
  account_status: string;
  currency: string;
  partner_status: string | null;
  signing_secret: string | null;
}

const refuse = (code: string, message: string, extra: { scope?: string } = {}) => ({
  code,
  message,
  scope: extra.scope ?? "",
});

/**
 * The hot path. One database round trip (key, person, account and company settings in one
 * query) and one Redis round trip. Nothing is cached, so revocation, a permission change, a
 * suspension or the API switch act on the very next request on every replica.
 */
export function createVerify(sql: Sql, redis: Redis, ns: string, pepper: string) {
  return async function verify(req: VerifyRequest): Promise<VerifyResult> {
    // An empty or malformed key still reads the settings row: with the Customer API switched
    // off every request is refused with FEATURE_DISABLED, keyed or not.
    const parsed = parseKey(req.key);
    const [row] = await sql<KeyRow[]>`
      select s.customer_api_enabled, s.hourly_request_limit, s.inventory_module, s.vps_module,
             k.id as key_id, k.secret_hash, k.label, k.scopes, k.ip_allowlist,
             k.revoked_at is not null as revoked,
             coalesce(k.expires_on < (now() at time zone 'utc')::date, false) as expired,
             p.id as person_id, p.customer_id, p.is_owner, p.permissions, p.name as person_name,
             p.email as person_email, c.status as account_status, c.currency,
             pa.status as partner_status, pa.signing_secret
      from settings s
      left join api_keys k on k.prefix = ${parsed?.prefix ?? ""}
      left join people p on p.id = k.person_id
      left join customers c on c.id = k.customer_id
      left join partners pa on pa.customer_id = k.customer_id`;

    const authenticated = !!(
      parsed &&
      row.key_id &&
      row.secret_hash &&
      hashMatches(parsed.full, pepper, row.secret_hash)
    );
    if (!authenticated) {
      return {
        refusal: row.customer_api_enabled
          ? refuse("UNAUTHORIZED", "Missing, malformed, unknown, expired or revoked API key")
          : refuse("FEATURE_DISABLED", "The Customer API is disabled"),
      };
    }

    // Every request of an identified key counts, refused ones included.
    const window: WindowCount = await countHourly(redis, ns, row.key_id!, row.hourly_request_limit);
    const permissions = row.is_owner ? [...ALL_PERMISSIONS] : row.permissions;
    const result: VerifyResult = {
      principal: {
        customerId: row.customer_id,
        personId: row.person_id,
        keyId: row.key_id!,
        keyLabel: row.label,
        scopes: row.scopes,
        permissions,
        isOwner: row.is_owner,
        accountStatus: customerStatusOf(row.account_status),
        personName: row.person_name,
        personEmail: row.person_email,
        currency: row.currency,
      },
      rateLimit: {
        limit: window.limit,
        remaining: window.remaining,
        reset: { seconds: BigInt(window.reset) },
      },
    };
    const refusal = check(row, req, window, permissions);
    if (refusal) result.refusal = refusal;
    return result;
  };
}

function check(row: KeyRow, req: VerifyRequest, window: WindowCount, permissions: string[]) {
  if (!row.customer_api_enabled) return refuse("FEATURE_DISABLED", "The Customer API is disabled");
  if (row.revoked) return refuse("UNAUTHORIZED", "Missing, malformed, unknown, expired or revoked API key");
  if (row.expired) return refuse("UNAUTHORIZED", "Missing, malformed, unknown, expired or revoked API key");
  if (!allowlistPermits(row.ip_allowlist, req.sourceIp)) {
    return refuse("FORBIDDEN", "Requests from this address are not allowed for this key");
  }
  if (window.count > window.limit) {
    return {
      ...refuse("RATE_LIMITED", "Hourly request limit exceeded"),
      retryAfterSeconds: retryAfter(window),
    };
  }
  if (req.module === Module.INVENTORY && !row.inventory_module) {
    return refuse("FEATURE_DISABLED", "Dedicated servers are not available (Inventory module is off)");
  }
  if (req.module === Module.VPS && !row.vps_module) {
    return refuse("FEATURE_DISABLED", "VPS snapshots are not available (VPS module is off)");
  }
  if (req.scope === "account" && !row.partner_status) {
    return refuse("FORBIDDEN", "Reseller routes are only for reseller partners");
  }
  if (req.scope && !row.scopes.includes(req.scope)) {
    return refuse("SCOPE_REQUIRED", `This API key lacks the ${req.scope} scope`, { scope: req.scope });
  }
  if (req.scope === "account") {
    const problem = checkResellerSignature(row.signing_secret, req);
    if (problem) return refuse("UNAUTHORIZED", problem);
    // A pending or suspended partner keeps read access but cannot order or change anything.
    if (req.isWrite && row.partner_status !== "active") {
      return refuse("FORBIDDEN", `The reseller partner profile is ${row.partner_status}: read access only`);
    }
  }
  if (!holdsAny(permissions, req.permissionsAny)) {
    return refuse("FORBIDDEN", "Your account permissions do not allow this action");
  }
  if (req.isWrite && row.account_status === "suspended") {
    return refuse("ACCOUNT_SUSPENDED", "The account is suspended: read access only");
  }
  return undefined;
}

/** Accepted clock skew for signed reseller requests; an older request cannot be replayed. */
export const SIGNATURE_MAX_SKEW_SECONDS = 300;

function checkResellerSignature(secret: string | null, req: VerifyRequest): string | undefined {
  if (!secret) return "No signing secret is configured for this partner";
  if (!/^\d{9,11}$/.test(req.resellerTimestamp))
    return "Missing or malformed X-Reseller-Timestamp (Unix seconds)";
  const skew = Math.abs(Date.now() / 1000 - Number(req.resellerTimestamp));
  if (skew > SIGNATURE_MAX_SKEW_SECONDS) return "X-Reseller-Timestamp is too far from the current time";
  return resellerSignatureMatches(req.rawBody, secret, req.resellerTimestamp, req.resellerSignature)
    ? undefined
    : "Invalid X-Reseller-Signature";
}

const retryAfter = (w: WindowCount) => Math.max(1, w.reset - Math.floor(Date.now() / 1000));
