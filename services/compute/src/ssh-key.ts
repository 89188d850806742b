import { createHash, createPublicKey } from "node:crypto";
import { createRequire } from "node:module";

/**
 * ssh2, loaded when the first key is parsed: compute uses it for nothing else, and loading it at
 * start (its native binding and its WebAssembly Poly1305 with a 16 MB memory) cost idle compute
 * about 10 MB of resident memory (docs/benchmarks.md, issue 31 §5, second pass). It is a CommonJS
 * package, so it loads synchronously and parsing stays synchronous.
 */
let ssh2: typeof import("ssh2") | undefined;
const sshLib = () => {
  ssh2 ??= createRequire(import.meta.url)("ssh2") as typeof import("ssh2");
  return ssh2;
};

/** The key types we store; DSA (dropped by OpenSSH) and certificates are refused. */
const KEY_TYPES = new Set([
  "ssh-ed25519",
  "ssh-rsa",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
]);
/** OpenSSH's own floor for RSA (SSH_RSA_MINIMUM_MODULUS_SIZE). */
const RSA_MIN_BITS = 1024;

export type ParsedSshKey =
  | { ok: true; type: string; line: string; fingerprint: string }
  | { ok: false; message: string };

/**
 * Validates one OpenSSH public key line ("type base64 [comment]") with ssh2's key parser: the blob
 * must decode as a key of the stated type, re-encode to exactly the bytes given (no trailing data)
 * and load as a public key in node:crypto (an ECDSA point on its curve, an RSA modulus). The
 * fingerprint is the SHA256 one `ssh-keygen -l` prints.
 */
export function parseSshPublicKey(text: string): ParsedSshKey {
  const line = text.trim();
  if (/[\r\n]/.test(line)) return { ok: false, message: "must be a single public key line" };
  const [type, b64, ...comment] = line.split(/\s+/);
  if (!type || !b64) return { ok: false, message: "must look like: ssh-ed25519 AAAA... comment" };
  if (!KEY_TYPES.has(type)) return { ok: false, message: `unsupported key type "${type.slice(0, 40)}"` };
  const invalid = { ok: false, message: `is not a valid ${type} public key` } as const;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return invalid;
  // The comment is ours to keep, not the parser's: it is free text and never affects validity.
  const key = sshLib().utils.parseKey(`${type} ${b64}`);
  if (key instanceof Error || key.isPrivateKey() || key.type !== type) return invalid;
  const blob = Buffer.from(b64, "base64");
  if (!key.getPublicSSH().equals(blob)) return invalid;
  try {
    const loaded = createPublicKey(key.getPublicPEM());
    if (type === "ssh-rsa" && (loaded.asymmetricKeyDetails?.modulusLength ?? 0) < RSA_MIN_BITS) {
      return { ok: false, message: `RSA keys must have at least ${RSA_MIN_BITS} bits` };
    }
  } catch {
    return invalid;
  }
  const fingerprint = `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
  return { ok: true, type, line: [type, b64, ...comment].join(" "), fingerprint };
}
