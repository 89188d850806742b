/** Test fixture: valid OpenSSH public key lines from fresh key pairs. */
import { generateKeyPairSync } from "node:crypto";

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
