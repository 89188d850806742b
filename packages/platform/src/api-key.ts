import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { crc32 } from "node:zlib";

/**
 * Key format: <marker>_<prefix8>_<secret96>, base62. The last 6 characters of the secret are a
 * CRC-32 of everything before them, so a mistyped or truncated key is refused without a database
 * look-up, and secret scanners can recognise a real key by its marker and checksum.
 */
export const KEY_MARKER = "hbk";
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PREFIX_LEN = 8;
const SECRET_LEN = 96;
const CHECKSUM_LEN = 6;
const keyShape = new RegExp(`^${KEY_MARKER}_([0-9A-Za-z]{${PREFIX_LEN}})_([0-9A-Za-z]{${SECRET_LEN}})$`);

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    // Rejection sampling keeps every character equally likely (248 = 4 * 62).
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function base62Fixed(n: number, width: number): string {
  let out = "";
  let v = n;
  for (let i = 0; i < width; i++) {
    out = ALPHABET[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62Fixed(crc32(body) >>> 0, CHECKSUM_LEN);
}

export interface GeneratedKey {
  prefix: string;
  full: string;
}

export function generateKey(): GeneratedKey {
  const prefix = randomBase62(PREFIX_LEN);
  const head = `${KEY_MARKER}_${prefix}_${randomBase62(SECRET_LEN - CHECKSUM_LEN)}`;
  return { prefix, full: head + checksum(head) };
}

export interface ParsedKey {
  prefix: string;
  full: string;
}

/** Returns undefined for anything that is not a well-formed key with a valid checksum. */
export function parseKey(text: string): ParsedKey | undefined {
  const m = keyShape.exec(text);
  if (!m) return undefined;
  const head = text.slice(0, -CHECKSUM_LEN);
  if (checksum(head) !== text.slice(-CHECKSUM_LEN)) return undefined;
  return { prefix: m[1], full: text };
}

/** Parses an Authorization header value: exactly "Bearer <key>". */
export function keyFromAuthorization(header: string | undefined): ParsedKey | undefined {
  if (!header) return undefined;
  const m = /^Bearer ([^\s]+)$/.exec(header);
  return m ? parseKey(m[1]) : undefined;
}

/** Shown in lists: marker, prefix, ellipsis. */
export const displayKey = (prefix: string) => `${KEY_MARKER}_${prefix}_…`;

/** HMAC-SHA256 with a server-side pepper: a database dump alone cannot test guesses. */
export function hashKey(full: string, pepper: string): Buffer {
  return createHmac("sha256", pepper).update(full).digest();
}

export function hashMatches(full: string, pepper: string, stored: Buffer): boolean {
  const h = hashKey(full, pepper);
  return stored.length === h.length && timingSafeEqual(h, stored);
}
