/** Test fixture: OpenSSH public key lines made by hand from fresh key pairs (wire format, RFC 4253/5656). */
import { generateKeyPairSync } from "node:crypto";

const sshString = (b: Buffer) => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
};
/** An mpint: big-endian, with a leading zero byte when the high bit is set. */
const mpint = (b: Buffer) => sshString(b[0] & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);

/** The base64 blob of a fresh key of the given OpenSSH type. */
export function keyBlob(
  type: "ssh-ed25519" | "ssh-rsa" | "ecdsa-sha2-nistp256" | "ecdsa-sha2-nistp384",
): Buffer {
  if (type === "ssh-ed25519") {
    const { publicKey } = generateKeyPairSync("ed25519");
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
    return Buffer.concat([sshString(Buffer.from(type)), sshString(raw)]);
  }
  if (type === "ssh-rsa") {
    const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const jwk = publicKey.export({ format: "jwk" });
    const [e, n] = [jwk.e, jwk.n].map((v) => Buffer.from(v ?? "", "base64url"));
    return Buffer.concat([sshString(Buffer.from(type)), mpint(e), mpint(n)]);
  }
  const curve = type === "ecdsa-sha2-nistp256" ? "P-256" : "P-384";
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: curve });
  const jwk = publicKey.export({ format: "jwk" });
  const point = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x ?? "", "base64url"),
    Buffer.from(jwk.y ?? "", "base64url"),
  ]);
  return Buffer.concat([
    sshString(Buffer.from(type)),
    sshString(Buffer.from(type.slice(11))),
    sshString(point),
  ]);
}

/** An OpenSSH public key line of a fresh key of the given type. */
export function keyLine(type: Parameters<typeof keyBlob>[0], comment = "me@host"): string {
  return `${type} ${keyBlob(type).toString("base64")}${comment ? ` ${comment}` : ""}`;
}

/** An OpenSSH ed25519 public key line made from a fresh key pair. */
export const ed25519Line = (comment = "me@host") => keyLine("ssh-ed25519", comment);
