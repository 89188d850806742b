import { createHash, randomBytes } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { type PortalService, Realm, type SessionSchema } from "@hb/contracts/hb/auth/v1/portal_pb";
import { ALL_PERMISSIONS, apiError, badRequest, notFound, type Sql, STAFF_PERMISSIONS } from "@hb/platform";
import type { Redis } from "@hb/platform/redis";
import { createPartnerListing } from "./partners.ts";
import { decoyHash, hashPassword, verifyPassword } from "./passwords.ts";
import { customerStatusOf, partnerStatusOf } from "./statuses.ts";

export interface PortalConfig {
  /** Failures for one address before it is locked. */
  maxFailures: number;
  /** How long a lock (and the count of failures leading to it) lasts. */
  lockSeconds: number;
  sessionSeconds: number;
  linkHours: number;
  /** log2 of scrypt's N for new hashes. */
  passwordCost: number;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest();
const realmWord = (r: Realm) => (r === Realm.ADMIN ? "admin" : "portal");
const token = () => randomBytes(32).toString("base64url");

interface StoredSession {
  realm: "portal" | "admin";
  subjectId: string;
  csrf: string;
  expiresAt: number;
}

interface Subject {
  id: string;
  name: string;
  email: string;
  password_hash: string | null;
  customer_id: string | null;
  is_owner: boolean;
  permissions: string[];
  customer_status: string | null;
  partner_status: string | null;
  currency: string | null;
}

// INCR and EXPIRE together, so a failure counter never outlives its window.
const countFailure = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('TTL', KEYS[1])}`;

/** Passwords, set-password links and sessions of the portal and the admin panel. */
export function createPortal(
  sql: Sql,
  redis: Redis,
  ns: string,
  cfg: PortalConfig,
): Partial<ServiceImpl<typeof PortalService>> {
  const decoy = decoyHash(cfg.passwordCost);
  const sessionKey = (t: string) => `${ns}:session:${sha256(t).toString("hex")}`;
  const failureKey = (realm: Realm, email: string) =>
    `${ns}:sign-in-failures:${realmWord(realm)}:${email.toLowerCase()}`;

  async function subject(
    realm: "portal" | "admin",
    by: { id?: string; email?: string },
  ): Promise<Subject | undefined> {
    if (realm === "admin") {
      const [s] = by.id
        ? await sql<Subject[]>`select id, name, email, password_hash, null as customer_id, false as is_owner,
            permissions, null as customer_status, null as partner_status, null as currency from staff where id = ${by.id}`
        : await sql<Subject[]>`select id, name, email, password_hash, null as customer_id, false as is_owner,
            permissions, null as customer_status, null as partner_status, null as currency from staff where lower(email) = lower(${by.email ?? ""})`;
      return s;
    }
    const cols = sql`p.id, p.name, p.email, p.password_hash, p.customer_id, p.is_owner, p.permissions,
      c.status as customer_status, pa.status as partner_status, c.currency
      from people p join customers c on c.id = p.customer_id left join partners pa on pa.customer_id = c.id`;
    const [p] = by.id
      ? await sql<Subject[]>`select ${cols} where p.id = ${by.id} and p.removed_at is null`
      : await sql<Subject[]>`select ${cols} where lower(p.email) = lower(${by.email ?? ""})
          and p.password_hash is not null and p.removed_at is null`;
    return p;
  }

  function sessionOut(s: Subject, stored: StoredSession): MessageInitShape<typeof SessionSchema> {
    return {
      realm: stored.realm === "admin" ? Realm.ADMIN : Realm.PORTAL,
      subjectId: s.id,
      name: s.name,
      email: s.email,
      csrfToken: stored.csrf,
      customerId: s.customer_id ?? "",
      isOwner: s.is_owner,
      permissions: s.is_owner ? [...ALL_PERMISSIONS] : s.permissions,
      customerStatus: s.customer_status ? customerStatusOf(s.customer_status) : undefined,
      expiresAt: timestampFromDate(new Date(stored.expiresAt)),
      partnerStatus: s.partner_status ? partnerStatusOf(s.partner_status) : undefined,
      currency: s.currency ?? "",
    };
  }

  return {
    async createPasswordLink(req) {
      const realm = realmWord(req.realm);
      if (!(await subject(realm, { id: req.subjectId })))
        throw notFound(realm === "admin" ? "Staff member" : "Person");
      const t = token();
      const expiresAt = new Date(Date.now() + cfg.linkHours * 3600_000);
      await sql`insert into password_links (token_hash, realm, subject_id, expires_at)
        values (${sha256(t)}, ${realm}, ${req.subjectId}, ${expiresAt})`;
      return { token: t, expiresAt: timestampFromDate(expiresAt) };
    },

    async setPassword(req) {
      const hash = await hashPassword(req.password, cfg.passwordCost);
      return sql
        .begin(async (tx) => {
          const [link] = await tx<{ realm: "portal" | "admin"; subject_id: string }[]>`
          update password_links set used_at = clock_timestamp()
          where token_hash = ${sha256(req.token)} and used_at is null and expires_at > now()
          returning realm, subject_id`;
          if (!link)
            throw badRequest("token", "This link has expired or was already used; ask for a new one");
          const [row] =
            link.realm === "admin"
              ? await tx<
                  { email: string }[]
                >`update staff set password_hash = ${hash} where id = ${link.subject_id} returning email`
              : await tx<{ email: string }[]>`update people set password_hash = ${hash}
                where id = ${link.subject_id} and removed_at is null returning email`;
          if (!row) throw badRequest("token", "This link's account no longer exists");
          return { realm: link.realm === "admin" ? Realm.ADMIN : Realm.PORTAL, email: row.email };
        })
        .catch((err: unknown) => {
          const e = err as { code?: unknown; constraint_name?: unknown };
          if (e.code === "23505" && e.constraint_name === "people_sign_in_email") {
            throw badRequest("token", "Another person already signs in with this e-mail address");
          }
          throw err;
        });
    },

    async signIn(req) {
      const realm = realmWord(req.realm);
      const fails = failureKey(req.realm, req.email.trim());
      const [count, ttl] = await Promise.all([redis.get(fails), redis.ttl(fails)]);
      if (Number(count ?? 0) >= cfg.maxFailures) {
        throw apiError("RATE_LIMITED", "Too many failed sign-ins for this address; try again later", {
          retryAfterSeconds: Math.max(ttl, 1),
        });
      }
      const s = await subject(realm, { email: req.email.trim() });
      // An unknown address costs as much as a wrong password, so timing tells nothing.
      const ok = s?.password_hash
        ? await verifyPassword(req.password, s.password_hash)
        : await verifyPassword(req.password, await decoy).then(() => false);
      if (!s || !ok) {
        const [n, left] = (await redis.eval(countFailure, 1, fails, String(cfg.lockSeconds))) as [
          number,
          number,
        ];
        if (n >= cfg.maxFailures) {
          throw apiError("RATE_LIMITED", "Too many failed sign-ins for this address; try again later", {
            retryAfterSeconds: Math.max(left, 1),
          });
        }
        throw apiError("UNAUTHORIZED", "The e-mail address or the password is not right");
      }
      await redis.del(fails);
      const t = token();
      const stored: StoredSession = {
        realm,
        subjectId: s.id,
        csrf: token(),
        expiresAt: Date.now() + cfg.sessionSeconds * 1000,
      };
      await redis.set(sessionKey(t), JSON.stringify(stored), "EX", cfg.sessionSeconds);
      return { sessionToken: t, session: sessionOut(s, stored) };
    },

    async getSession(req) {
      const unauthorized = () => apiError("UNAUTHORIZED", "Please sign in");
      if (!req.sessionToken) throw unauthorized();
      const raw = await redis.get(sessionKey(req.sessionToken));
      if (!raw) throw unauthorized();
      const stored = JSON.parse(raw) as StoredSession;
      if (stored.realm !== realmWord(req.realm)) throw unauthorized();
      const s = await subject(stored.realm, { id: stored.subjectId });
      if (!s?.password_hash) throw unauthorized();
      return { session: sessionOut(s, stored) };
    },

    async signOut(req) {
      if (req.sessionToken) await redis.del(sessionKey(req.sessionToken));
      return {};
    },

    ...createPartnerListing(sql),

    async listStaff() {
      const rows = await sql<{ id: string; name: string; email: string; permissions: string[] }[]>`
        select id, name, email, permissions from staff order by created_at, id`;
      return { staff: rows };
    },

    async setStaffPermissions(req) {
      const bad = req.permissions.find((p) => !(STAFF_PERMISSIONS as readonly string[]).includes(p));
      if (bad) throw badRequest("permissions", `Unknown staff permission "${bad}"`);
      const [row] = await sql<{ id: string; name: string; email: string; permissions: string[] }[]>`
        update staff set permissions = ${[...new Set(req.permissions)]} where id = ${req.staffId}
        returning id, name, email, permissions`;
      if (!row) throw notFound("Staff member");
      return { staff: row };
    },

    async removePerson(req) {
      await sql.begin(async (tx) => {
        const [p] = await tx<{ is_owner: boolean }[]>`select is_owner from people
          where id = ${req.personId} and removed_at is null for update`;
        if (!p) throw notFound("Person");
        if (p.is_owner) throw apiError("CONFLICT", "The account owner cannot be removed");
        await tx`update api_keys set revoked_at = coalesce(revoked_at, clock_timestamp()) where person_id = ${req.personId}`;
        await tx`update people set removed_at = clock_timestamp(), password_hash = null where id = ${req.personId}`;
      });
      return {};
    },
  };
}
