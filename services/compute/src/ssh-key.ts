import { createHash } from "node:crypto";

const KEY_TYPES = new Set([
  "ssh-ed25519",
  "ssh-rsa",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "sk-ssh-ed25519@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com",
]);

export type ParsedSshKey =
  | { ok: true; type: string; line: string; fingerprint: string }
  | { ok: false; message: string };

/**
 * Validates one OpenSSH public key line ("type base64 [comment]"): a known type, valid base64 whose
 * embedded type name matches the declared one. Fingerprint as `ssh-keygen -l` prints it.
 */
export function parseSshPublicKey(text: string): ParsedSshKey {
  const line = text.trim();
  if (line.includes("\n")) return { ok: false, message: "must be a single public key line" };
  const [type, b64, ...comment] = line.split(/\s+/);
  if (!type || !b64) return { ok: false, message: "must look like: ssh-ed25519 AAAA... comment" };
  if (!KEY_TYPES.has(type)) return { ok: false, message: `unsupported key type "${type.slice(0, 40)}"` };
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return { ok: false, message: "key data is not base64" };
  const blob = Buffer.from(b64, "base64");
  if (blob.length < 4 + type.length) return { ok: false, message: "key data is too short" };
  const nameLength = blob.readUInt32BE(0);
  const embedded = blob.subarray(4, 4 + nameLength).toString("latin1");
  if (embedded !== type) return { ok: false, message: "key data does not match the key type" };
  const fingerprint = `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
  return { ok: true, type, line: [type, b64, ...comment].join(" "), fingerprint };
}
