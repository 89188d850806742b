import { randomInt } from "node:crypto";

/**
 * Bank transfer references a person can read out and type: "HB-" and eight characters of
 * Crockford's base 32 alphabet (no I, L, O, U), in two groups. 32^8 ≈ 10^12 values, so a
 * collision is rare and the unique index catches the one that happens.
 */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export function newReference(): string {
  let s = "";
  for (let i = 0; i < 8; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return `HB-${s.slice(0, 4)}-${s.slice(4)}`;
}

/**
 * A reference as staff or a bank statement may spell it: any case, spaces or dashes anywhere,
 * and the letters Crockford reads as digits (O→0, I and L→1). Undefined when it cannot be one.
 */
export function normaliseReference(text: string): string | undefined {
  const bare = text.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
  const m = /^HB([0-9A-Z]{8})$/.exec(bare);
  if (!m || [...m[1]].some((c) => !ALPHABET.includes(c))) return undefined;
  return `HB-${m[1].slice(0, 4)}-${m[1].slice(4)}`;
}
