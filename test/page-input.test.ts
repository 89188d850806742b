/**
 * Bad input to the portal and admin pages is refused as the API refuses it (400, 413), as a page,
 * never a 500: NUL characters in any field (before sign-in too), dates a timestamp cannot hold,
 * a form larger than a form may be.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { auth, GATEWAY } from "./helpers.ts";
import { csrfIn, portalOwner, signInVisitor, visitor } from "./portal-pages.ts";

describe("pages refuse bad input as the API does", () => {
  it("a NUL character in a field of the sign-in form is 400, before the address is looked up", async () => {
    const v = visitor();
    const form = await v.get("/portal/sign-in");
    const r = await v.post("/portal/sign-in", {
      _csrf: csrfIn(form.text),
      email: "someone\u0000@example.test",
      password: "whatever-it-is",
    });
    assert.equal(r.status, 400);
    assert.match(r.text, /email: must not contain a NUL character/);
    assert.equal(r.headers.get("content-type"), "text/html; charset=utf-8");
    const admin = visitor();
    const adminForm = await admin.get("/admin/sign-in");
    const a = await admin.post("/admin/sign-in", {
      _csrf: csrfIn(adminForm.text),
      email: "staff@example.test",
      password: "pass\u0000word",
    });
    assert.equal(a.status, 400);
    // In a query value too.
    assert.equal((await visitor().get("/portal/sign-in?next=%00")).status, 400);
  });

  it("a NUL character in a signed-in form is 400 and changes nothing", async () => {
    const owner = await portalOwner();
    const v = await signInVisitor(GATEWAY, "portal", owner.email);
    const page = await v.get("/portal/keys");
    const r = await v.post("/portal/keys", {
      _csrf: csrfIn(page.text),
      label: "ci\u0000key",
      scopes: "read",
    });
    assert.equal(r.status, 400);
    assert.match(r.text, /label: must not contain a NUL character/);
    assert.equal((await auth.listKeys({ personId: owner.ownerId })).keys.length, 0);
  });

  it("expiry dates of the years 0000 and 9999, or not on the calendar, are 400 with the field's message", async () => {
    const owner = await portalOwner();
    const v = await signInVisitor(GATEWAY, "portal", owner.email);
    // Each post sends a fresh page's tokens (the keys form is accepted once per page).
    const postKey = async (label: string, expires: string) => {
      const page = await v.get("/portal/keys");
      const once = /name="_once" value="([^"]+)"/.exec(page.text)?.[1] ?? "";
      return v.post("/portal/keys", {
        _csrf: csrfIn(page.text),
        _once: once,
        label,
        scopes: "read",
        expires,
      });
    };
    for (const [expires, message] of [
      ["0000-01-01", /Enter a date as YYYY-MM-DD/],
      ["2027-02-31", /Enter a date as YYYY-MM-DD/],
      ["0001-01-01", /must be today or later/],
    ] as const) {
      const r = await postKey("dated", expires);
      assert.equal(r.status, 400, `${expires}: ${r.status}`);
      assert.match(r.text, /id="f-expires-error"/, expires);
      assert.match(r.text, message, expires);
    }
    assert.equal((await auth.listKeys({ personId: owner.ownerId })).keys.length, 0);
    // The last day a timestamp can name is a valid expiry, not an overflow.
    const far = await postKey("far", "9999-12-31");
    assert.equal(far.status, 303, "created, then sent on to the page that shows the key");
    const [key] = (await auth.listKeys({ personId: owner.ownerId })).keys;
    assert.equal(key.expiresOn?.seconds, BigInt(Date.parse("9999-12-31T00:00:00Z") / 1000));
  });

  it("a 100 KB sign-in form is 413, as a page", async () => {
    const v = visitor();
    const form = await v.get("/portal/sign-in");
    const r = await v.post("/portal/sign-in", {
      _csrf: csrfIn(form.text),
      email: "big@example.test",
      password: "x".repeat(100 * 1024),
    });
    assert.equal(r.status, 413);
    assert.match(r.text, /The form is too large/);
  });
});
