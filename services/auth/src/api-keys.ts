import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import {
  ALL_PERMISSIONS,
  apiError,
  badRequest,
  describeNeeds,
  generateKey,
  hashKey,
  holdsAny,
  isScope,
  newId,
  notFound,
  prepared,
  SCOPE_NEEDS,
  SCOPES,
  type Sql,
} from "@hb/platform";
import { parseAllowlist } from "./allowlist.ts";
import type { AuthHandlers } from "./handlers.ts";
import { type KeyChanges, noKeyChanges } from "./key-distribution.ts";
import { type KeyRow, keyColumns, keyOut, type LogRow, logOut, type PersonRow } from "./records.ts";

// Ids, the label's length and blankness and the expiry's form (a date, today or later) are the
// requests' declared rules (auth.proto); what needs the permission table or parsing stays here.

function allowlist(raw: string): string[] {
  const r = parseAllowlist(raw);
  if (!r.ok) throw badRequest("ip_allowlist", r.message);
  return r.entries;
}

/** An expiry (00:00 UTC of the day) as the date column takes it: that UTC date. */
const utcDate = (d: Date | null | undefined): string | null => (d ? d.toISOString().slice(0, 10) : null);
const expiryDate = (t: Timestamp | undefined) => utcDate(t && timestampDate(t));

/** `keys` hears of every change a gateway's key check reads; each returns once it is applied. */
export function createApiKeys(sql: Sql, pepper: string, keys: KeyChanges = noKeyChanges): AuthHandlers {
  const person = async (id: string) => {
    const [p] = await sql<PersonRow[]>`select * from people where id = ${id}`;
    if (!p) throw notFound("Person");
    return p;
  };
  const ownKey = async (personId: string, keyId: string) => {
    const [k] = await sql.unsafe<KeyRow[]>(
      `select ${keyColumns} from api_keys where id = $1 and person_id = $2`,
      [keyId, personId],
      prepared,
    );
    if (!k) throw notFound("API key");
    return k;
  };
  const keyById = async (id: string) =>
    (await sql.unsafe<KeyRow[]>(`select ${keyColumns} from api_keys where id = $1`, [id], prepared))[0];
  const staff = async (staffId: string, permission: "view_clients" | "edit_clients") => {
    const [s] = await sql<{ permissions: string[] }[]>`select permissions from staff where id = ${staffId}`;
    if (!s) throw apiError("UNAUTHORIZED", "Unknown staff user");
    if (!s.permissions.includes(permission)) {
      throw apiError("FORBIDDEN", `Staff permission ${permission.replace("_", " ")} is required`);
    }
  };
  const logFor = async (customerId: string, keyId: string, limit: number) => {
    const n = Math.min(Math.max(limit || 100, 1), 1000);
    const rows = keyId
      ? await sql<LogRow[]>`select * from request_log where customer_id = ${customerId} and key_id = ${keyId}
          order by at desc, id desc limit ${n}`
      : await sql<
          LogRow[]
        >`select * from request_log where customer_id = ${customerId} order by at desc, id desc limit ${n}`;
    return rows.map(logOut);
  };

  return {
    async createKey(req) {
      const p = await person(req.personId);
      const unknown = req.scopes.find((s) => !isScope(s));
      if (unknown) throw badRequest("scopes", `Unknown scope "${unknown}"; choose from ${SCOPES.join(", ")}`);
      // read is always on and cannot be removed.
      const scopes = SCOPES.filter((s) => s === "read" || req.scopes.includes(s));
      const held = p.is_owner ? ALL_PERMISSIONS : p.permissions;
      for (const scope of scopes) {
        if (!holdsAny(held, SCOPE_NEEDS[scope])) {
          throw apiError(
            "FORBIDDEN",
            `The ${scope} scope requires the ${describeNeeds(SCOPE_NEEDS[scope])} permission`,
            {
              violations: [
                { field: "scopes", message: `${scope} requires ${describeNeeds(SCOPE_NEEDS[scope])}` },
              ],
            },
          );
        }
      }
      if (scopes.includes("account")) {
        const [partner] = await sql`select 1 from partners where customer_id = ${p.customer_id}`;
        if (!partner) throw apiError("FORBIDDEN", "The account scope is only for reseller partners");
      }
      const values = {
        label: req.label.trim(),
        allowlist: allowlist(req.ipAllowlist),
        expires: expiryDate(req.expiresOn),
      };
      const generated = generateKey();
      const id = newId();
      await sql.begin(async (tx) => {
        // Serialises key creation per customer so the active-key limit holds under concurrency.
        await tx`select id from customers where id = ${p.customer_id} for update`;
        const [{ active, limit }] = await tx<{ active: number; limit: number }[]>`
          select (select count(*)::int from api_keys where customer_id = ${p.customer_id} and revoked_at is null
                    and (expires_on is null or expires_on >= (now() at time zone 'utc')::date)) as active,
                 (select active_key_limit from settings) as limit`;
        if (active >= limit) {
          throw apiError(
            "CONFLICT",
            `The account already has the maximum of ${limit} active keys; revoke one first`,
          );
        }
        await tx`insert into api_keys (id, customer_id, person_id, label, prefix, secret_hash, scopes, ip_allowlist, expires_on)
          values (${id}, ${p.customer_id}, ${p.id}, ${values.label}, ${generated.prefix},
                  ${hashKey(generated.full, pepper)}, ${scopes}, ${values.allowlist}, ${values.expires})`;
      });
      await keys.customer(p.customer_id);
      return { key: keyOut((await keyById(id))!), secretKey: generated.full };
    },

    async updateKey(req) {
      const p = await person(req.personId);
      const k = await ownKey(p.id, req.keyId);
      if (k.revoked_at) throw apiError("CONFLICT", "A revoked key cannot be edited");
      const next = {
        label: req.label !== undefined ? req.label.trim() : k.label,
        allowlist: req.ipAllowlist !== undefined ? allowlist(req.ipAllowlist) : k.ip_allowlist,
        expires:
          req.expiry.case === "expiresOn"
            ? expiryDate(req.expiry.value)
            : req.expiry.case === "noExpiry" && req.expiry.value
              ? null
              : utcDate(k.expires_on),
      };
      await sql`update api_keys set label = ${next.label}, ip_allowlist = ${next.allowlist}, expires_on = ${next.expires}
        where id = ${k.id}`;
      await keys.customer(k.customer_id);
      return { key: keyOut((await keyById(k.id))!) };
    },

    async revokeKey(req) {
      const p = await person(req.personId);
      const k = await ownKey(p.id, req.keyId);
      await sql`update api_keys set revoked_at = coalesce(revoked_at, clock_timestamp()) where id = ${k.id}`;
      await keys.customer(k.customer_id);
      return { key: keyOut((await keyById(k.id))!) };
    },

    async listKeys(req) {
      const p = await person(req.personId);
      const rows = await sql.unsafe<KeyRow[]>(
        `select ${keyColumns} from api_keys where person_id = $1 order by created_at desc, id desc`,
        [p.id],
        prepared,
      );
      const [{ active, limit }] = await sql<{ active: number; limit: number }[]>`
        select (select count(*)::int from api_keys where customer_id = ${p.customer_id} and revoked_at is null
                  and (expires_on is null or expires_on >= (now() at time zone 'utc')::date)) as active,
               (select active_key_limit from settings) as limit`;
      return { keys: rows.map(keyOut), activeCount: active, activeLimit: limit };
    },

    async listRequestLog(req) {
      const p = await person(req.personId);
      if (req.keyId) await ownKey(p.id, req.keyId);
      return { entries: await logFor(p.customer_id, req.keyId, req.limit) };
    },

    async staffListKeys(req) {
      await staff(req.staffId, "view_clients");
      const rows = await sql.unsafe<KeyRow[]>(
        `select ${keyColumns} from api_keys where customer_id = $1 order by created_at desc, id desc`,
        [req.customerId],
        prepared,
      );
      return { keys: rows.map(keyOut) };
    },

    async staffListRequestLog(req) {
      await staff(req.staffId, "view_clients");
      return { entries: await logFor(req.customerId, req.keyId, req.limit) };
    },

    async staffRevokeKey(req) {
      await staff(req.staffId, "edit_clients");
      const k = await keyById(req.keyId);
      if (!k) throw notFound("API key");
      await sql`update api_keys set revoked_at = coalesce(revoked_at, clock_timestamp()) where id = ${k.id}`;
      await keys.customer(k.customer_id);
      return { key: keyOut((await keyById(k.id))!) };
    },
  };
}
