import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { PrincipalSchema, type VerifyRequest } from "@hb/contracts/hb/auth/v1/auth_pb";
import { generateKey } from "@hb/platform";
import express from "express";
import type { Clients } from "./clients.ts";
import type { GatewayConfig } from "./config.ts";
import type { KeySync } from "./key-sync.ts";
import { KeyTable } from "./key-table.ts";
import { createRequestAuth } from "./request-auth.ts";

// A replica whose key table is out of step (its stream lost, or given up by auth under load):
// the key is checked by auth.Verify instead, as a replica without a table does.
describe("a key check while the key table is out of step", () => {
  const good = generateKey().full;
  const revoked = generateKey().full;
  const asked: string[] = [];
  let base = "";
  let close = () => {};
  before(async () => {
    const verify = async (req: VerifyRequest) => {
      asked.push(req.key);
      return req.key === good
        ? { principal: create(PrincipalSchema, { customerId: "c1", keyId: "k1", scopes: ["account"] }) }
        : { refusal: { code: "UNAUTHORIZED", message: "Invalid or revoked API key" } };
    };
    const outOfStep: KeySync = { table: new KeyTable(), serving: () => false, close: async () => {} };
    const auth = createRequestAuth({
      // Only what the check reads: auth.Verify; the table path's config and Redis are not reached.
      cfg: {} as GatewayConfig,
      clients: { auth: { verify } } as unknown as Clients,
      redis: undefined as never,
      keys: outOfStep,
    });
    const app = express();
    app.get("/checked", async (req, res) => {
      const p = await auth.authenticate(req, res, { scope: "account", write: false });
      if (p) res.json({ customerId: p.customerId });
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  after(() => close());

  const get = (key: string) => fetch(`${base}/checked`, { headers: { authorization: `Bearer ${key}` } });

  it("accepts a key auth accepts, asking auth", async () => {
    const r = await get(good);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { customerId: "c1" });
    assert.deepEqual(asked.splice(0), [good]);
  });

  it("refuses a key auth refuses, as auth says (401), not 503", async () => {
    const r = await get(revoked);
    assert.equal(r.status, 401);
    assert.equal(((await r.json()) as { code: string }).code, "UNAUTHORIZED");
    assert.deepEqual(asked.splice(0), [revoked]);
  });

  it("refuses nothing early: the body is read and auth asked", () => {
    const { earlyRefusal } = createRequestAuth({
      cfg: {} as GatewayConfig,
      clients: {} as Clients,
      redis: undefined as never,
      keys: { table: new KeyTable(), serving: () => false, close: async () => {} },
    });
    assert.equal(earlyRefusal({ full: revoked, prefix: revoked.split("_")[1] } as never), undefined);
  });
});
