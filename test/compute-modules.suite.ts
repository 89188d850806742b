import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { before, describe, it } from "node:test";
import type { OwnStack } from "./own-stack.ts";
import { companyStack } from "./support/company-stack.ts";

// The Inventory and VPS modules are company-wide switches, so this suite runs on the company-wide
// stack (test/company-wide.test.ts), and switches them on again.
describe("compute routes behind modules", () => {
  let s: OwnStack;
  let key = "";
  const call = (method: string, path: string, body?: unknown) => s.call(method, path, key, body);

  before(async () => {
    s = await companyStack();
    const { owner } = await s.auth.createCustomer({ name: "M", email: "m@example.test", currency: "EUR" });
    key = (
      await s.auth.createKey({
        personId: owner!.id,
        label: "k",
        scopes: ["services"],
        ipAllowlist: "",
      })
    ).secretKey;
  });

  it("refuses dedicated routes without Inventory and snapshots without VPS with 403 FEATURE_DISABLED", async () => {
    const id = randomUUID();
    await s.auth.updateSettings({ inventoryModule: false, vpsModule: false });
    try {
      for (const [method, path, body] of [
        ["GET", "/dedicated", undefined],
        ["GET", `/dedicated/${id}/power-status`, undefined],
        ["POST", `/dedicated/${id}/power`, { action: "on" }],
        ["POST", `/dedicated/${id}/reinstall`, { osImageId: "debian-12" }],
        ["GET", `/vps/${id}/snapshots`, undefined],
        ["POST", `/vps/${id}/snapshots`, {}],
      ] as const) {
        const r = await call(method, path, body);
        assert.equal(r.status, 403, `${method} ${path}`);
        assert.equal(r.body.code, "FEATURE_DISABLED", `${method} ${path}`);
      }
      const vps = await call("GET", `/vps/${id}`);
      assert.equal(vps.status, 404, "the VPS record itself needs no module");
    } finally {
      await s.auth.updateSettings({ inventoryModule: true, vpsModule: true });
    }
    assert.equal((await call("GET", `/dedicated/${id}/power-status`)).status, 404);
    assert.equal((await call("GET", `/vps/${id}/snapshots`)).status, 404);
  });
});
