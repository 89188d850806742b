/**
 * Sign-in under attack, through the pages: the lock holds for every spelling of an address and for
 * parallel guesses, one source cannot spray guesses at scrypt's cost, a changed password ends the
 * sessions opened before it, and a set-password link cannot take over an account that has a password.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { describe, it } from "node:test";
import { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { resolveError } from "@hb/platform";
import postgres from "postgres";
import { DEFAULT_LOG2_COST, hashPassword } from "../services/auth/src/passwords.ts";
import { newToken } from "../services/gateway/src/pages/customer/once.ts";
import { auth, GATEWAY, unique } from "./helpers.ts";
import {
  csrfIn,
  PASSWORD,
  portal,
  portalMember,
  portalOwner,
  signInVisitor,
  staffMember,
  visitor,
  withPassword,
} from "./portal-pages.ts";

// Each test signs in from a loopback address of its own (all of 127/8 is this machine), so the
// per-source allowance it uses up is nobody else's.
let lastOctet = 20 + (process.pid % 100);
const nextSource = () => `127.0.${(lastOctet++ % 250) + 1}.${(process.pid % 240) + 11}`;

/** A form token and its cookie, as the sign-in page hands them out. */
async function signInForm() {
  const v = visitor();
  const token = csrfIn((await v.get("/portal/sign-in")).text);
  return { token, cookie: [...v.jar].map(([k, val]) => `${k}=${val}`).join("; ") };
}

/** POSTs the sign-in form from `from`; the status and the page. */
function postSignIn(
  from: string,
  form: { token: string; cookie: string },
  email: string,
  password: string,
): Promise<{ status: number; text: string }> {
  const body = new URLSearchParams({ _csrf: form.token, email, password }).toString();
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL("/portal/sign-in", GATEWAY),
      {
        method: "POST",
        localAddress: from,
        agent: false,
        headers: {
          cookie: form.cookie,
          "content-type": "application/x-www-form-urlencoded",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => {
          text += c.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A customer owner who signs in with PASSWORD; the address is ASCII with an "i" to spell as "İ". */
async function owner() {
  const email = `kiki-${unique("o")}@example.test`;
  const { owner } = await auth.createCustomer({ name: "Kiki", email, currency: "EUR" });
  await withPassword(Realm.PORTAL, owner!.id);
  return { email, personId: owner!.id };
}

/** Stores a password hash for a person, as auth would have stored it. */
async function setHash(personId: string, hash: string) {
  const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  try {
    await sql`update auth.people set password_hash = ${hash} where id = ${personId}`;
  } finally {
    await sql.end();
  }
}

const counts = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((m, s) => {
    m[s] = (m[s] ?? 0) + 1;
    return m;
  }, {});

describe("sign-in under attack", () => {
  it("locks the account for every spelling the look-up matches (PostgreSQL lowers İ to i)", async () => {
    const o = await owner();
    const from = nextSource();
    const form = await signInForm();
    for (let i = 0; i < 4; i++)
      assert.equal((await postSignIn(from, form, o.email, "wrong-password")).status, 401);
    assert.equal((await postSignIn(from, form, o.email, "wrong-password")).status, 429);
    // "kİki-…" finds the same account; it must find the same lock.
    const dotted = `k\u0130${o.email.slice(2)}`;
    const r = await postSignIn(from, form, dotted, PASSWORD);
    assert.equal(r.status, 429, "the locked account signed in through another spelling of its address");
    assert.match(r.text, /Too many failed sign-ins/);
  });

  it("30 parallel wrong passwords, each from its own address, check no more passwords than the lock allows", async () => {
    const o = await owner();
    // The password hashed at production's cost (the test stack hashes at 2^12): a check then takes
    // as long as it does in production, the window in which parallel guesses used to pass the count.
    await setHash(o.personId, await hashPassword(PASSWORD, DEFAULT_LOG2_COST));
    const form = await signInForm();
    // 30 sources (as a botnet's), so neither per-source limit is what stops them: only the account's count.
    const statuses = (
      await Promise.all(
        Array.from({ length: 30 }, (_, i) => postSignIn(nextSource(), form, o.email, `wrong-${i}-password`)),
      )
    ).map((r) => r.status);
    const c = counts(statuses);
    // Five failures lock the account: four are told "not right", the fifth and every later one 429.
    assert.deepEqual(c, { 401: 4, 429: 26 }, JSON.stringify(c));
    assert.equal((await postSignIn(nextSource(), form, o.email, PASSWORD)).status, 429);
  });

  it("80 parallel sign-ins with random addresses from one source: 401 or 429, never 500 or 503, and at most the source's allowance checked", async () => {
    const from = nextSource();
    const form = await signInForm();
    const statuses = (
      await Promise.all(
        Array.from({ length: 80 }, () =>
          postSignIn(from, form, `${unique("nobody")}@example.test`, "guess-guess-guess"),
        ),
      )
    ).map((r) => r.status);
    const c = counts(statuses);
    assert.deepEqual(Object.keys(c).sort(), ["401", "429"], JSON.stringify(c));
    // The source's allowance is 30 failures (SIGN_IN_SOURCE_MAX_FAILURES) and 8 checks at a time
    // (SIGN_IN_SOURCE_CONCURRENCY): everything beyond is refused before a password is checked.
    assert.ok(c[401] >= 1 && c[401] <= 30, JSON.stringify(c));
    // That source is refused even the right password for a while; another source is not.
    const o = await owner();
    assert.equal((await postSignIn(from, form, o.email, PASSWORD)).status, 429);
    assert.equal((await postSignIn(nextSource(), form, o.email, PASSWORD)).status, 303);
  });
});

describe("sign-in input", () => {
  it("auth itself refuses a NUL character in the address with BAD_REQUEST, for any caller (not a 500)", async () => {
    await assert.rejects(
      portal.signIn({
        realm: Realm.PORTAL,
        email: "a\u0000@example.test",
        password: "x",
        sourceIp: nextSource(),
      }),
      (err) => {
        const r = resolveError(err);
        assert.deepEqual([r.code, r.info?.violations.map((v) => v.field)], ["BAD_REQUEST", ["email"]]);
        return true;
      },
    );
  });
});

describe("passwords and sessions", () => {
  it("a password change ends every session opened with the one before", async () => {
    const staff = await staffMember(["view_clients"]);
    const first = await signInVisitor(GATEWAY, "admin", staff.email);
    const second = await signInVisitor(GATEWAY, "admin", staff.email);
    assert.equal((await first.get("/admin/customers")).status, 200);
    await withPassword(Realm.ADMIN, staff.staffId, "a-changed-password");
    for (const v of [first, second]) {
      const r = await v.get("/admin/customers");
      assert.equal(r.status, 303, "a session of the old password still opened a page");
      assert.match(r.location, /^\/admin\/sign-in/);
    }
    const again = await signInVisitor(GATEWAY, "admin", staff.email, "a-changed-password");
    assert.equal((await again.get("/admin/customers")).status, 200);
  });

  it("staff cannot issue a set-password link for a person who has a password, nor use one issued before", async () => {
    const editor = await staffMember(["view_clients", "edit_clients"]);
    const email = `${unique("victim")}@example.test`;
    const { customer, owner: person } = await auth.createCustomer({ name: "Victim", email, currency: "EUR" });
    // A link issued while the person had no password, kept back by whoever issued it.
    const early = await portal.createPasswordLink({ realm: Realm.PORTAL, subjectId: person!.id });
    await withPassword(Realm.PORTAL, person!.id);

    const admin = await signInVisitor(GATEWAY, "admin", editor.email);
    const page = await admin.get(`/admin/customers/${customer!.id}/people`);
    assert.match(page.text, /Password set/);
    const r = await admin.post(`/admin/customers/${customer!.id}/people/${person!.id}/link`, {
      _csrf: csrfIn(page.text),
    });
    assert.equal(r.status, 409);
    assert.match(r.text, /already has a password/);
    assert.doesNotMatch(r.text, /set-password\?token=/);
    await assert.rejects(portal.createPasswordLink({ realm: Realm.PORTAL, subjectId: person!.id }), (err) => {
      assert.equal(resolveError(err).code, "CONFLICT");
      return true;
    });

    const v = visitor();
    const form = await v.get(`/portal/set-password?token=${early.token}`);
    const used = await v.post("/portal/set-password", {
      _csrf: csrfIn(form.text),
      token: early.token,
      password: "taken-over-password",
    });
    assert.equal(used.status, 400);
    assert.match(used.text, /already chosen a password/);
    // The person's own password still works; the attacker's does not.
    await signInVisitor(GATEWAY, "portal", email);
    const attacker = visitor();
    const f = await attacker.get("/portal/sign-in");
    const refused = await attacker.post("/portal/sign-in", {
      _csrf: csrfIn(f.text),
      email,
      password: "taken-over-password",
    });
    assert.equal(refused.status, 401);
  });

  it("an owner's new link for a member is refused once the member has chosen a password", async () => {
    const o = await portalOwner();
    const member = await portalMember(o.customerId, ["view_services"]);
    const v = await signInVisitor(GATEWAY, "portal", o.email);
    const team = await v.get("/portal/team");
    assert.match(team.text, /has chosen a password/);
    assert.doesNotMatch(team.text, new RegExp(`/portal/team/${member.personId}/link`));
    // Forged (the page draws no such form), with a token of its own as any team form carries.
    const r = await v.post(`/portal/team/${member.personId}/link`, {
      _csrf: csrfIn(team.text),
      _once: newToken(),
    });
    assert.equal(r.status, 409);
    assert.match(r.text, /already has a password/);
    assert.doesNotMatch(r.text, /set-password\?token=/);
  });
});
