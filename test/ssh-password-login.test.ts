/**
 * SSH password login is a per-machine choice, off by default (issue 30 §5): the password reset's
 * `ssh_password_login` is kept on the machine, and omitting it keeps the current choice. What the
 * choice does inside a real machine is tested with LXD in services/compute/src/lxd/ssh-password.test.ts.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { api, eventually, newAccount, newMachine } from "./helpers.ts";
import { serviceSql } from "./support/service-db.ts";

describe("SSH password login on a password reset", () => {
  const sql = serviceSql("compute");
  after(() => sql.end());
  const choice = async (id: string) =>
    (
      await sql<
        { on: boolean }[]
      >`select ssh_password_login as on from compute.machines where service_id = ${id}`
    )[0].on;
  const reset = async (key: string, id: string, body: Record<string, unknown>) => {
    const r = await api("POST", `/api/v1/vps/${id}/password`, { key, body });
    assert.equal(r.status, 200, r.text);
    await eventually(async () => {
      const j = await api("GET", `/api/v1/jobs/${r.body.data.job_id}`, { key });
      return j.body.data.status === "succeeded";
    });
  };

  it("is off on a new machine and stays off when a reset does not mention it", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    assert.equal(await choice(id), false);
    await reset(acct.key, id, { password: "correct horse" });
    assert.equal(await choice(id), false);
  });

  it("keeps true or false as given, and an omitted choice keeps the machine's", async () => {
    const acct = await newAccount();
    const [on, off, kept] = await Promise.all([newMachine(acct), newMachine(acct), newMachine(acct)]);
    await sql`update compute.machines set ssh_password_login = true where service_id in ${sql([off, kept])}`;
    await reset(acct.key, on, { password: "correct horse", ssh_password_login: true });
    await reset(acct.key, off, { password: "correct horse", ssh_password_login: false });
    await reset(acct.key, kept, { password: "correct horse" });
    assert.deepEqual([await choice(on), await choice(off), await choice(kept)], [true, false, true]);
  });

  it("answers 400 BAD_REQUEST naming the field for a value that is not a boolean", async () => {
    const acct = await newAccount();
    const id = await newMachine(acct);
    for (const value of ["yes", 1, null]) {
      const r = await api("POST", `/api/v1/vps/${id}/password`, {
        key: acct.key,
        body: { password: "correct horse", ssh_password_login: value },
      });
      assert.equal(r.status, 400, `${JSON.stringify(value)}: ${r.text}`);
      assert.equal(r.body.code, "BAD_REQUEST");
      assert.equal(r.body.details[0].field, "ssh_password_login");
    }
    assert.equal(await choice(id), false, "a refused request changes nothing");
  });

  it("is described in the OpenAPI document's password bodies", async () => {
    const doc = (await api("GET", "/api/v1/openapi.json")).body;
    const body = doc.paths["/vps/{id}/password"].post.requestBody.content["application/json"].schema;
    const field = body.properties?.ssh_password_login ?? body;
    assert.equal(field.type, "boolean", JSON.stringify(body));
    assert.match(field.description, /password/);
  });
});
