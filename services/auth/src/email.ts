import { badRequest } from "@hb/platform";

/**
 * A practical check rather than RFC 5322: something before one "@", a domain of dotted labels
 * (letters, digits, inner hyphens; IDN in either form) and nothing that cannot appear in an address
 * a person types (spaces, quotes, angle brackets, commas). It catches typos such as a missing "@",
 * a missing domain or two addresses pasted together.
 */
const LOCAL = /^[^\s@"(),:;<>[\]\\]{1,64}$/u;
const LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;

export function isEmail(value: string): boolean {
  if (value.length > 254) return false;
  const at = value.lastIndexOf("@");
  if (at <= 0 || value.indexOf("@") !== at) return false;
  const local = value.slice(0, at);
  const labels = value.slice(at + 1).split(".");
  if (!LOCAL.test(local) || local.startsWith(".") || local.endsWith(".") || local.includes("..")) {
    return false;
  }
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && labels.at(-1)!.length >= 2;
}

/** The address trimmed, or BAD_REQUEST naming the field. */
export function requireEmail(field: string, value: string): string {
  const v = value.trim();
  if (!v) throw badRequest(field, `${field} is required`);
  if (!isEmail(v)) throw badRequest(field, `${field} is not a valid e-mail address`);
  return v;
}
