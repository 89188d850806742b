import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/**
 * scrypt from node:crypto: memory-hard (N=2^15, r=8 uses 32 MiB per hash) and no dependency.
 * The parameters travel inside the stored string, so raising them later keeps old hashes valid.
 */
export const DEFAULT_LOG2_COST = 15;
const KEY_LEN = 32;
// Node refuses a hash whose memory (128 * N * r) reaches maxmem; leave room above 32 MiB.
const MAXMEM = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, KEY_LEN, { ...opts, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** `log2Cost` is log2 of scrypt's N: 15 in production; the test stack lowers it to spare CPU. */
export async function hashPassword(password: string, log2Cost = DEFAULT_LOG2_COST): Promise<string> {
  const cost = { N: 2 ** log2Cost, r: 8, p: 1 };
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return ["scrypt", cost.N, cost.r, cost.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** True when the password matches; a malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, key] = stored.split("$");
  if (kind !== "scrypt" || !salt || !key) return false;
  const expected = Buffer.from(key, "base64url");
  const actual = await derive(password, Buffer.from(salt, "base64url"), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash of a random password, checked when the address is unknown so both answers take as long. */
export const decoyHash = (log2Cost: number) => hashPassword(randomBytes(16).toString("hex"), log2Cost);
