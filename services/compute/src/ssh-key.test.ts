import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSshPublicKey } from "./ssh-key.ts";
import { ed25519Line } from "./ssh-key-fixture.ts";

describe("ssh public key lines", () => {
  it("accepts an ed25519 line and fingerprints it like ssh-keygen", () => {
    const r = parseSshPublicKey(ed25519Line());
    assert.equal(r.ok, true);
    assert.match((r as { fingerprint: string }).fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
  });
  it("refuses garbage, unknown types, bad base64 and mismatched type names", () => {
    const good = ed25519Line();
    for (const bad of [
      "",
      "hello",
      "ssh-dss AAAAB3NzaC1kc3M=",
      "ssh-ed25519 !!!",
      good.replace("ssh-ed25519", "ssh-rsa"),
      `${good}\nssh-ed25519 AAAA`,
    ]) {
      assert.equal(parseSshPublicKey(bad).ok, false, bad.slice(0, 30));
    }
  });
});
