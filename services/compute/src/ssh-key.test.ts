import assert from "node:assert/strict";
import { createHash, generateKeyPairSync } from "node:crypto";
import { describe, it } from "node:test";
import { keyBlob, keyLine } from "../../../test/support/ssh-key-fixture.ts";
import { parseSshPublicKey } from "./ssh-key.ts";

const TYPES = ["ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384"] as const;
const sha256 = (b: Buffer) => `SHA256:${createHash("sha256").update(b).digest("base64").replace(/=+$/, "")}`;
const refused = (line: string) => {
  const r = parseSshPublicKey(line);
  return r.ok ? "" : r.message;
};

describe("ssh public key lines", () => {
  for (const type of TYPES) {
    it(`accepts a ${type} key and fingerprints its blob with SHA256 like ssh-keygen -l`, () => {
      const blob = keyBlob(type);
      const r = parseSshPublicKey(`${type} ${blob.toString("base64")} me@host`);
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(r.type, type);
      assert.equal(r.fingerprint, sha256(blob));
    });
  }

  it("keeps the comment as given, spaces included, and leaves the fingerprint to the key alone", () => {
    const blob = keyBlob("ssh-ed25519").toString("base64");
    const withComment = parseSshPublicKey(`  ssh-ed25519 ${blob} work laptop (2026)  `);
    const without = parseSshPublicKey(`ssh-ed25519 ${blob}`);
    const base64Comment = parseSshPublicKey(`ssh-ed25519 ${blob} AAAAC3NzaC1lZDI1NTE5`);
    assert.ok(withComment.ok && without.ok && base64Comment.ok);
    assert.equal(withComment.line, `ssh-ed25519 ${blob} work laptop (2026)`);
    assert.equal(without.line, `ssh-ed25519 ${blob}`);
    assert.equal(withComment.fingerprint, without.fingerprint);
    assert.equal(base64Comment.fingerprint, without.fingerprint);
  });

  it("refuses a truncated key of each type", () => {
    for (const type of TYPES) {
      const blob = keyBlob(type);
      for (const cut of [1, 4, 16]) {
        const line = `${type} ${blob.subarray(0, blob.length - cut).toString("base64")}`;
        assert.match(refused(line), /is not a valid/, `${type} minus ${cut} bytes`);
      }
    }
  });

  it("refuses a key whose stated type is not the type of its blob", () => {
    const rsa = keyBlob("ssh-rsa").toString("base64");
    const ed = keyBlob("ssh-ed25519").toString("base64");
    const p256 = keyBlob("ecdsa-sha2-nistp256").toString("base64");
    assert.match(refused(`ssh-ed25519 ${rsa}`), /not a valid ssh-ed25519/);
    assert.match(refused(`ssh-rsa ${ed}`), /not a valid ssh-rsa/);
    assert.match(refused(`ecdsa-sha2-nistp384 ${p256}`), /not a valid ecdsa-sha2-nistp384/);
  });

  it("refuses trailing bytes after the key and an ECDSA point that is not on its curve", () => {
    const ed = keyBlob("ssh-ed25519");
    const trailing = Buffer.concat([ed, Buffer.from([0, 0, 0, 1, 7])]).toString("base64");
    assert.match(refused(`ssh-ed25519 ${trailing}`), /is not a valid/);
    const p256 = keyBlob("ecdsa-sha2-nistp256");
    p256[p256.length - 1] ^= 1;
    assert.match(refused(`ecdsa-sha2-nistp256 ${p256.toString("base64")}`), /is not a valid/);
  });

  it("refuses RSA keys below OpenSSH's 1024-bit floor", () => {
    const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 512 });
    const jwk = publicKey.export({ format: "jwk" });
    const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
    const n = Buffer.concat([Buffer.from([0]), Buffer.from(jwk.n ?? "", "base64url")]);
    const blob = Buffer.concat([
      str(Buffer.from("ssh-rsa")),
      str(Buffer.from(jwk.e ?? "", "base64url")),
      str(n),
    ]);
    assert.match(refused(`ssh-rsa ${blob.toString("base64")}`), /at least 1024 bits/);
  });

  it("refuses garbage, unsupported types, bad base64, private keys and several lines", () => {
    const good = keyLine("ssh-ed25519");
    const { privateKey } = generateKeyPairSync("ed25519");
    for (const bad of [
      "",
      "hello",
      "ssh-dss AAAAB3NzaC1kc3M=",
      "ssh-ed25519-cert-v01@openssh.com AAAA",
      "ssh-ed25519 !!!",
      `${good}\n${good}`,
      privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
    ]) {
      assert.notEqual(refused(bad), "", bad.slice(0, 40));
    }
  });
});
