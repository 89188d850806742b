/**
 * Team and API-key forms act once, as every other portal write (issue 29 §1/§2 loose ends), over
 * HTTP as a browser without JavaScript sends them: each form carries a one-time token; the same
 * token twice invites one person, makes one set-password link, revokes once, and the repeat lands
 * where the first went; a form without its token does nothing. Key forms follow the page table:
 * a member whose permissions cover no key is drawn no Create key and a forged one makes none.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { auth, GATEWAY, unique } from "./helpers.ts";
import { csrfIn, portalMember, portalOwner, signInVisitor } from "./portal-pages.ts";

type Visitor = Awaited<ReturnType<typeof signInVisitor>>;

/** The hidden fields of the form posting to `action` on the page. */
function formOf(html: string, action: string): Record<string, string> {
  const at = html.indexOf(`action="${action}"`);
  assert.ok(at >= 0, `a form posts to ${action}`);
  const once = /name="_once" value="([^"]+)"/.exec(html.slice(at))?.[1];
  assert.ok(once, `the form posting to ${action} carries a one-time token`);
  return { _csrf: csrfIn(html), _once: once };
}

/** The same form sent twice at once (a double click): both answers. */
async function twice(v: Visitor, path: string, form: Record<string, string>) {
  return Promise.all([v.post(path, form), v.post(path, form)]);
}

const membersOf = async (customerId: string) =>
  (await auth.getCustomer({ customerId })).people.filter((p) => !p.isOwner);

describe("team and key forms in the portal", () => {
  it("an invitation sent twice invites one person; its link is shown once, after the redirect", async () => {
    const owner = await portalOwner();
    const v = await signInVisitor(GATEWAY, "portal", owner.email);
    const page = await v.get("/portal/team");
    const email = `${unique("ivy")}@example.test`;
    const form = { ...formOf(page.text, "/portal/team"), name: "Ivy", email, permissions: "view_services" };
    const [a, b] = await twice(v, "/portal/team", form);
    assert.equal(a.status, 303, a.text);
    assert.equal(b.status, 303, b.text);
    assert.equal(a.location, b.location, "the repeat goes where the first went");
    assert.equal((await membersOf(owner.customerId)).filter((p) => p.email === email).length, 1);

    const shown = await v.get(a.location);
    assert.match(shown.text, /Set-password link for Ivy/);
    assert.match(shown.text, /\/portal\/set-password\?token=/);
    const again = await v.get(a.location);
    assert.doesNotMatch(again.text, /\/portal\/set-password\?token=/, "the link is shown once");
    assert.match(again.text, /Invited Ivy\./);

    const [ivy] = await membersOf(owner.customerId);
    const withIvy = await v.get("/portal/team");
    const perms = `/portal/team/${ivy.id}/permissions`;
    const [p1] = await twice(v, perms, { ...formOf(withIvy.text, perms), permissions: "view_invoices" });
    assert.equal(p1.status, 303);
    assert.deepEqual((await membersOf(owner.customerId))[0].permissions, ["view_invoices"]);
    const remove = `/portal/team/${ivy.id}/remove`;
    const [r1, r2] = await twice(v, remove, formOf(withIvy.text, remove));
    assert.equal(r1.status, 303);
    assert.equal(r2.location, r1.location, "the second removal is the first one's outcome, not a 404");
    assert.deepEqual(await membersOf(owner.customerId), []);
  });

  it("a team form without its one-time token does nothing", async () => {
    const owner = await portalOwner();
    const v = await signInVisitor(GATEWAY, "portal", owner.email);
    const page = await v.get("/portal/team");
    const r = await v.post("/portal/team", {
      _csrf: csrfIn(page.text),
      name: "Nobody",
      email: "n@example.test",
    });
    assert.equal(r.status, 400);
    assert.match(r.text, /This form has expired/);
    assert.deepEqual(await membersOf(owner.customerId), []);
  });

  it("a key's edit and revoke forms act once per token", async () => {
    const owner = await portalOwner();
    const { key } = await auth.createKey({
      personId: owner.ownerId,
      label: "old",
      scopes: [],
      ipAllowlist: "",
    });
    const v = await signInVisitor(GATEWAY, "portal", owner.email);
    const edit = `/portal/keys/${key!.id}/edit`;
    const shown = await v.get(edit);
    const [e1, e2] = await twice(v, edit, {
      ...formOf(shown.text, edit),
      label: "new",
      expires: "",
      allowlist: "",
    });
    assert.equal(e1.status, 303);
    assert.equal(e2.location, e1.location);
    const noToken = await v.post(edit, {
      _csrf: csrfIn(shown.text),
      label: "forged",
      expires: "",
      allowlist: "",
    });
    assert.equal(noToken.status, 400);
    const revoke = `/portal/keys/${key!.id}/revoke`;
    const asked = await v.get(revoke);
    const [k1, k2] = await twice(v, revoke, formOf(asked.text, revoke));
    assert.equal(k1.status, 303);
    assert.equal(k2.location, k1.location);
    const [after] = (await auth.listKeys({ personId: owner.ownerId })).keys;
    assert.equal(after.label, "new", "the tokenless edit did nothing");
    assert.ok(after.revokedAt, "revoked");
  });

  it("Create key is drawn only for a person the page table allows, and a forged one makes no key", async () => {
    const owner = await portalOwner();
    // Power only: no view permission, so no scope a key must hold (read) is covered.
    const powerOnly = await portalMember(owner.customerId, ["power_services"]);
    const m = await signInVisitor(GATEWAY, "portal", powerOnly.email);
    const page = await m.get("/portal/keys");
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /action="\/portal\/keys"/, "no Create key form");
    const ownerPage = await (await signInVisitor(GATEWAY, "portal", owner.email)).get("/portal/keys");
    const forged = await m.post("/portal/keys", {
      ...formOf(ownerPage.text, "/portal/keys"),
      label: "forged",
    });
    assert.equal(forged.status, 403);
    assert.equal((await auth.listKeys({ personId: powerOnly.personId })).keys.length, 0);

    // A view-only member's role covers the read scope (the spec's scope table): the form is drawn.
    const viewer = await portalMember(owner.customerId, ["view_services"]);
    const vv = await signInVisitor(GATEWAY, "portal", viewer.email);
    assert.match((await vv.get("/portal/keys")).text, /action="\/portal\/keys"/);
  });
});
