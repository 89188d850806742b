import { createHash, randomBytes } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type PortalService,
  Realm,
  type SessionSchema,
  type SignInRequest,
} from "@hb/contracts/hb/auth/v1/portal_pb";
import {
  ALL_PERMISSIONS,
  apiError,
  badRequest,
  notFound,
  type Sql,
  STAFF_PERMISSIONS,
  throttleSubject,
} from "@hb/platform";
import type { LuaScript, Redis } from "@hb/platform/redis";
import { type KeyChanges, noKeyChanges } from "./key-distribution.ts";
import { createPartnerListing } from "./partners.ts";
import { decoyHash, hashPassword, verifyPassword } from "./passwords.ts";
import { customerStatusOf, partnerStatusOf } from "./statuses.ts";

export interface PortalConfig {
  /** Failures for one address before it is locked. */
  maxFailures: number;
  /** How long a lock (and the count of failures leading to it) lasts. */
  lockSeconds: number;
  /** Failed sign-ins one source address (an IPv6 /64) may make in its window, whatever the account. */
  sourceMaxFailures: number;
  sourceWindowSeconds: number;
  /** Sign-ins of one source checked at the same time; more are refused 429 at once. */
  sourceConcurrency: number;
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
  /** passwordMark of the password hash at sign-in. */
  password?: string;
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

// INCR and EXPIRE together, so a counter never outlives its window; returns the count with this
// attempt and the seconds its window has left.
const countAttempt = `
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('TTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('TTL', KEYS[1])}`;

// Gives one counted attempt back, never creating a counter (its window may have ended meanwhile).
const giveBack = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0`;

/** For connectRedis, which defines them before the client's first command. */
export const signInScripts = {
  hbSignInCount: { numberOfKeys: 1, lua: countAttempt },
  hbSignInGiveBack: { numberOfKeys: 1, lua: giveBack },
} satisfies Record<string, LuaScript>;

type WithSignInScripts = Redis & {
  hbSignInCount(key: string, windowSeconds: number): Promise<[number, number]>;
  hbSignInGiveBack(key: string): Promise<number>;
};

const hasPassword = () =>
  apiError(
    "CONFLICT",
    "This person already has a password: a set-password link can only be issued to a person who has none yet",
  );

// A running count left by a crashed replica lapses after this.
const RUNNING_TTL_SECONDS = 60;

const tooMany = (message: string, secondsLeft: number) =>
  apiError("RATE_LIMITED", message, { retryAfterSeconds: Math.max(secondsLeft, 1) });

/** What a session remembers of the password it was opened with: any change of it ends the session. */
const passwordMark = (hash: string) => sha256(hash).toString("base64url").slice(0, 22);

/** Passwords, set-password links and sessions of the portal and the admin panel. */
export function createPortal(
  sql: Sql,
  redis: Redis,
  ns: string,
  cfg: PortalConfig,
  keys: KeyChanges = noKeyChanges,
): Partial<ServiceImpl<typeof PortalService>> {
  const decoy = decoyHash(cfg.passwordCost);
  const sessionKey = (t: string) => `${ns}:session:${sha256(t).toString("hex")}`;
  const counters = redis as WithSignInScripts;
  // An account is counted by its id, however its address was spelt: the look-up matches with
  // PostgreSQL's lower(), which differs from JavaScript's (lower('İ') is 'i' there), so a key made
  // from the typed address gave a locked account a fresh counter. An address with no account
  // has nothing to protect; it is still counted, by its text.
  const failureKey = (realm: Realm, s: Subject | undefined, email: string) =>
    `${ns}:sign-in-failures:${realmWord(realm)}:${s ? `id:${s.id}` : `address:${email.toLowerCase()}`}`;

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

  /** The look-up, the account's count and the password check of one sign-in. */
  async function checkPassword(req: SignInRequest, realm: "portal" | "admin", source: string) {
    const email = req.email.trim();
    const s = await subject(realm, { email });
    const fails = failureKey(req.realm, s, email);
    const [n, left] = await counters.hbSignInCount(fails, cfg.lockSeconds);
    const locked = "Too many failed sign-ins for this address; try again later";
    if (n > cfg.maxFailures) throw tooMany(locked, left);
    // An unknown address costs as much as a wrong password, so timing tells nothing.
    const ok = s?.password_hash
      ? await verifyPassword(req.password, s.password_hash)
      : await verifyPassword(req.password, await decoy).then(() => false);
    if (!s?.password_hash || !ok) {
      if (n >= cfg.maxFailures) throw tooMany(locked, left);
      throw apiError("UNAUTHORIZED", "The e-mail address or the password is not right");
    }
    // The attempt was not a failure: the account's count starts again, the source's gets it back.
    await Promise.all([redis.del(fails), counters.hbSignInGiveBack(source)]);
    const t = token();
    const stored: StoredSession = {
      realm,
      subjectId: s.id,
      csrf: token(),
      expiresAt: Date.now() + cfg.sessionSeconds * 1000,
      password: passwordMark(s.password_hash),
    };
    await redis.set(sessionKey(t), JSON.stringify(stored), "EX", cfg.sessionSeconds);
    return { sessionToken: t, session: sessionOut(s, stored) };
  }

  return {
    async createPasswordLink(req) {
      const realm = realmWord(req.realm);
      const s = await subject(realm, { id: req.subjectId });
      if (!s) throw notFound(realm === "admin" ? "Staff member" : "Person");
      // Whoever issues a link could use it: staff (or an owner) must never set the password of a
      // person who already signs in, and so hold their account (the spec: staff never read or
      // create a secret). A link sets a first password only.
      if (realm === "portal" && s.password_hash) throw hasPassword();
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
                where id = ${link.subject_id} and removed_at is null and password_hash is null returning email`;
          if (!row) {
            // A link issued before the person chose a password (with another link) sets nothing.
            const [held] = await tx`select 1 from people
              where id = ${link.subject_id} and removed_at is null and password_hash is not null`;
            if (held)
              throw badRequest(
                "token",
                "This person has already chosen a password; the link no longer works",
              );
            throw badRequest("token", "This link's account no longer exists");
          }
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
      // PostgreSQL text cannot hold NUL: the look-up would fail as an internal error. No account
      // has such an address, so refusing it before counting gives a guesser nothing.
      if (req.email.includes("\u0000")) throw badRequest("email", "email must not contain a NUL character");
      const realm = realmWord(req.realm);
      const from = throttleSubject(req.sourceIp || "unknown");
      // Counted before anything costs a password check, so parallel attempts cannot pass a limit
      // and a flood from one source costs one Redis call each beyond its allowance.
      const source = `${ns}:sign-in-source:${from}`;
      const [fromSource, sourceLeft] = await counters.hbSignInCount(source, cfg.sourceWindowSeconds);
      if (fromSource > cfg.sourceMaxFailures) {
        throw tooMany("Too many failed sign-ins from your network; try again later", sourceLeft);
      }
      // And few checks at once per source: each holds scrypt's memory and one of libuv's 4 threads,
      // so a burst within the allowance must not queue the others' sign-ins past their deadline.
      const running = `${ns}:sign-in-running:${from}`;
      const [atOnce] = await counters.hbSignInCount(running, RUNNING_TTL_SECONDS);
      try {
        if (atOnce > cfg.sourceConcurrency) {
          throw tooMany("Too many sign-ins at once from your network; try again in a moment", 1);
        }
        return await checkPassword(req, realm, source);
      } finally {
        await counters.hbSignInGiveBack(running);
      }
    },

    async getSession(req) {
      const unauthorized = () => apiError("UNAUTHORIZED", "Please sign in");
      if (!req.sessionToken) throw unauthorized();
      const raw = await redis.get(sessionKey(req.sessionToken));
      if (!raw) throw unauthorized();
      const stored = JSON.parse(raw) as StoredSession;
      if (stored.realm !== realmWord(req.realm)) throw unauthorized();
      const s = await subject(stored.realm, { id: stored.subjectId });
      // A changed (or removed) password ends every session opened with the one before.
      if (!s?.password_hash || stored.password !== passwordMark(s.password_hash)) {
        await redis.del(sessionKey(req.sessionToken));
        throw unauthorized();
      }
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
      const customerId = await sql.begin(async (tx) => {
        const [p] = await tx<
          { is_owner: boolean; customer_id: string }[]
        >`select is_owner, customer_id from people
          where id = ${req.personId} and removed_at is null for update`;
        if (!p) throw notFound("Person");
        if (p.is_owner) throw apiError("CONFLICT", "The account owner cannot be removed");
        await tx`update api_keys set revoked_at = coalesce(revoked_at, clock_timestamp()) where person_id = ${req.personId}`;
        await tx`update people set removed_at = clock_timestamp(), password_hash = null where id = ${req.personId}`;
        return p.customer_id;
      });
      // The gateways' key tables still hold the keys as live until they hear of the revocation.
      await keys.customer(customerId);
      return {};
    },
  };
}
