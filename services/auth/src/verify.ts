import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  ModuleSchema,
  type VerifyRequest,
  type VerifyResponseSchema,
} from "@hb/contracts/hb/auth/v1/auth_pb";
import { ALL_PERMISSIONS, enumTable, hashMatches, parseKey, type Sql } from "@hb/platform";
import { MODULE_WORDS } from "@hb/platform/enum-words.gen";
import {
  decideKey,
  RESELLER_SCOPE,
  type ResellerFacts,
  unauthenticatedRefusal,
} from "@hb/platform/key-decision";
import { countHourly, type WindowCount } from "@hb/platform/rate-window";
import type { Redis } from "@hb/platform/redis";
import { resellerSignatureMatches } from "@hb/webhook-signature";
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

/**
 * The authoritative key check. The gateway asks it for a key its key table has not confirmed yet,
 * for every signed (reseller) route, and for every request when its table is off (KEY_TABLE=false).
 * One database round trip (key, person, account, partner and company settings in one query) and
 * one Redis round trip. Nothing is cached, so revocation, a permission change, a suspension or the
 * API switch act on the very next request.
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
      return { refusal: unauthenticatedRefusal(row.customer_api_enabled) };
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

const MODULES = enumTable(ModuleSchema, MODULE_WORDS);

/** The facts of the row, decided by the platform's decideKey (which the gateway's key table asks too). */
function check(row: KeyRow, req: VerifyRequest, window: WindowCount, permissions: string[]) {
  const module = MODULES.word(req.module);
  const reseller: ResellerFacts | undefined =
    req.scope === RESELLER_SCOPE
      ? {
          partnerStatus: row.partner_status ?? "",
          signatureProblem: row.partner_status ? checkResellerSignature(row.signing_secret, req) : undefined,
        }
      : undefined;
  return decideKey(
    {
      customerApiEnabled: row.customer_api_enabled,
      inventoryModule: row.inventory_module,
      vpsModule: row.vps_module,
      revoked: row.revoked,
      expired: row.expired,
      ipAllowlist: row.ip_allowlist,
      sourceIp: req.sourceIp,
      scopes: row.scopes,
      permissions,
      accountSuspended: row.account_status === "suspended",
      window,
      nowMs: Date.now(),
    },
    { scope: req.scope, permissionsAny: req.permissionsAny, write: req.isWrite, module },
    reseller,
  );
}

/** Accepted clock skew for signed reseller requests; an older request cannot be replayed. */
const SIGNATURE_MAX_SKEW_SECONDS = 300;

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
