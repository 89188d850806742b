/**
 * Sign-in of the portal and the admin panel over plain HTTP: cookies, CSRF, lock-out, one-time
 * links, separation of the realms, and keys and sessions kept apart.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import postgres from "postgres";
import { adminEntry } from "../scripts/bundle-file.ts";
import { api, auth, GATEWAY, unique } from "./helpers.ts";
import {
  csrfIn,
  PASSWORD,
  portal,
  portalOwner,
  signInVisitor,
  staffMember,
  visitor,
} from "./portal-pages.ts";

const signedIn = (area: "portal" | "admin", email: string, password = PASSWORD) =>
  signInVisitor(GATEWAY, area, email, password);

describe("portal and admin sign-in", () => {
  it("sets an HttpOnly, SameSite=Strict session cookie scoped to its area, and signs out", async () => {
    const owner = await portalOwner();
    const v = await signedIn("portal", owner.email);
    const session = v.setCookies.find((c) => c.startsWith("hb_portal_session="))!;
    assert.match(session, /; Path=\/portal; HttpOnly; SameSite=Strict/);
    // The test stack's public address is 127.0.0.1: no Secure there (it is set everywhere else).
    assert.doesNotMatch(session, /Secure/);
    const keys = await v.get("/portal/keys");
    assert.equal(keys.status, 200);
    assert.equal(keys.headers.get("cache-control"), "no-store");
    await v.post("/portal/sign-out", { _csrf: csrfIn(keys.text) });
    const after = await v.get("/portal/keys");
    assert.equal(after.status, 303);
    assert.match(after.location, /^\/portal\/sign-in/);
  });

  it("says why the sign-in page is shown: signed out, or a session that ended", async () => {
    const owner = await portalOwner();
    const v = await signedIn("portal", owner.email);
    const services = await v.get("/portal/services");
    const out = await v.post("/portal/sign-out", { _csrf: csrfIn(services.text) });
    assert.match((await v.get(out.location)).text, /role="status">You are signed out\.</);
    // A browser still holding an ended session's cookie asks for a page.
    const ended = await fetch(`${GATEWAY}/portal/services`, {
      headers: { cookie: `hb_portal_session=${"x".repeat(43)}` },
      redirect: "manual",
    });
    const to = ended.headers.get("location") ?? "";
    assert.match(to, /^\/portal\/sign-in\?next=%2Fportal%2Fservices&ended=1$/);
    assert.match(await (await fetch(`${GATEWAY}${to}`)).text(), /Your session has ended; sign in again\./);
  });

  it("refuses a form without the session's CSRF token", async () => {
    const owner = await portalOwner();
    const v = await signedIn("portal", owner.email);
    const none = await v.post("/portal/keys", { label: "forged" });
    assert.equal(none.status, 403);
    const wrong = await v.post("/portal/keys", { label: "forged", _csrf: "x".repeat(43) });
    assert.equal(wrong.status, 403);
    const { keys } = await auth.listKeys({ personId: owner.ownerId });
    assert.equal(keys.length, 0);
    // The sign-in form is protected too (a cookie and the same token in the form).
    const fresh = visitor();
    const r = await fresh.post("/portal/sign-in", { email: owner.email, password: PASSWORD });
    assert.equal(r.status, 403);
  });

  it("locks an address after repeated failures, even for the right password, and says so", async () => {
    const owner = await portalOwner();
    const v = visitor();
    const token = csrfIn((await v.get("/portal/sign-in")).text);
    for (let i = 0; i < 4; i++) {
      const r = await v.post("/portal/sign-in", {
        _csrf: token,
        email: owner.email,
        password: "wrong-password-here",
      });
      assert.equal(r.status, 401);
      assert.match(r.text, /The e-mail address or the password is not right/);
      assert.match(
        r.text,
        new RegExp(`value="${owner.email.replace(/[.+]/g, "\\$&")}"`),
        "the address is kept",
      );
    }
    const fifth = await v.post("/portal/sign-in", {
      _csrf: token,
      email: owner.email,
      password: "wrong-password-here",
    });
    assert.equal(fifth.status, 429);
    const right = await v.post("/portal/sign-in", { _csrf: token, email: owner.email, password: PASSWORD });
    assert.equal(right.status, 429);
    assert.match(right.text, /Too many failed sign-ins/);
    assert.ok(Number(right.headers.get("retry-after")) > 0);
  });

  it("keeps the realms apart: a portal password never opens the admin panel, nor an admin session the portal", async () => {
    const owner = await portalOwner();
    const v = visitor();
    const form = await v.get("/admin/sign-in");
    const r = await v.post("/admin/sign-in", {
      _csrf: csrfIn(form.text),
      email: owner.email,
      password: PASSWORD,
    });
    assert.equal(r.status, 401);

    const staff = await staffMember(["view_clients"]);
    const admin = await signedIn("admin", staff.email);
    const token = admin.jar.get("hb_admin_session")!;
    const asPortal = await fetch(`${GATEWAY}/portal/keys`, {
      headers: { cookie: `hb_portal_session=${token}` },
      redirect: "manual",
    });
    assert.equal(asPortal.status, 303);
  });

  it("staff sessions never reach the customer API, and API keys never open a page", async () => {
    const staff = await staffMember(["view_clients", "edit_clients"]);
    const admin = await signedIn("admin", staff.email);
    const token = admin.jar.get("hb_admin_session")!;
    const call = await api("GET", "/api/v1/account", { headers: { cookie: `hb_admin_session=${token}` } });
    assert.equal(call.status, 401);
    const asBearer = await api("GET", "/api/v1/account", { key: token });
    assert.equal(asBearer.status, 401);

    const owner = await portalOwner();
    const { secretKey } = await auth.createKey({
      personId: owner.ownerId,
      label: "k",
      scopes: [],
      ipAllowlist: "",
    });
    const page = await fetch(`${GATEWAY}/portal/keys`, {
      headers: { authorization: `Bearer ${secretKey}` },
      redirect: "manual",
    });
    assert.equal(page.status, 303);
    assert.match(page.headers.get("location") ?? "", /^\/portal\/sign-in/);
  });

  it("a set-password link works once and the password is stored as a scrypt hash", async () => {
    const email = `${unique("owner")}@example.test`;
    const { owner: person } = await auth.createCustomer({ name: unique("Owner"), email, currency: "EUR" });
    const owner = { ownerId: person!.id, email };
    const { token } = await portal.createPasswordLink({ realm: Realm.PORTAL, subjectId: owner.ownerId });
    const v = visitor();
    const form = await v.get(`/portal/set-password?token=${token}`);
    assert.equal(form.headers.get("referrer-policy"), "no-referrer");
    const short = await v.post("/portal/set-password", {
      _csrf: csrfIn(form.text),
      token,
      password: "short",
    });
    assert.equal(short.status, 400);
    assert.match(short.text, /at least 12 characters/);
    const ok = await v.post("/portal/set-password", {
      _csrf: csrfIn(form.text),
      token,
      password: "a-brand-new-password",
    });
    assert.equal(ok.status, 200);
    const again = await v.post("/portal/set-password", {
      _csrf: csrfIn(form.text),
      token,
      password: "yet-another-password",
    });
    assert.equal(again.status, 400);
    assert.match(again.text, /expired or was already used/);
    await signedIn("portal", owner.email, "a-brand-new-password");
    const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<
        { password_hash: string }[]
      >`select password_hash from auth.people where id = ${owner.ownerId}`;
      assert.match(row.password_hash, /^scrypt\$\d+\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
      assert.equal(row.password_hash.includes("a-brand-new-password"), false);
    } finally {
      await sql.end();
    }
  });

  it("the first staff account of a deployment is one admin command, which prints a working set-password link", async () => {
    const email = `${unique("first-staff")}@example.test`;
    const run = spawnSync(
      process.execPath,
      [
        adminEntry(),
        "staff",
        "create",
        "--name",
        "First Staff",
        "--email",
        email,
        "--permissions",
        "view_clients,edit_clients",
      ],
      { encoding: "utf8", env: { ...process.env, PUBLIC_URL: GATEWAY } },
    );
    assert.equal(run.status, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.deepEqual(out.staff.permissions, ["view_clients", "edit_clients"]);
    const link = new URL(out.setPasswordLink);
    assert.equal(link.pathname, "/admin/set-password");
    const v = visitor();
    const form = await v.get(link.pathname + link.search);
    const set = await v.post("/admin/set-password", {
      _csrf: csrfIn(form.text),
      token: link.searchParams.get("token")!,
      password: "first-staff-password",
    });
    assert.equal(set.status, 200);
    const admin = await signedIn("admin", email, "first-staff-password");
    assert.equal((await admin.get("/admin/customers")).status, 200);
  });
});
