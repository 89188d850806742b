import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, it } from "node:test";
import { parseSshPublicKey } from "./ssh-key.ts";

/** An OpenSSH ed25519 public key line made from a fresh key pair. */
export function ed25519Line(comment = "me@host"): string {
  const { publicKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  const name = Buffer.from("ssh-ed25519");
  const blob = Buffer.concat([Buffer.alloc(4), name, Buffer.alloc(4), raw]);
  blob.writeUInt32BE(name.length, 0);
  blob.writeUInt32BE(raw.length, 4 + name.length);
  return `ssh-ed25519 ${blob.toString("base64")} ${comment}`;
}

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
