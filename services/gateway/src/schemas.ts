import { formatMoney, readPositiveMoney } from "@hb/platform/money";
import { MAX_PAGE, PAGE_SIZE } from "@hb/platform/paging";
import { z } from "zod";
import { numberSource } from "./body.ts";

/** Shared input schemas, so every route validates ids and paging the same way. */
export const idParam = z.uuid({ error: "is not a valid identifier" });

/**
 * ?page from 1 to MAX_PAGE, ?limit above the spec's maximum silently reduced to it (@hb/platform
 * paging.ts holds the numbers). The one pagination query.
 */
export function pageQuery(defaultLimit: number) {
  return z.object({
    page: z.coerce
      .number({ error: "must be a whole number" })
      .int({ error: "must be a whole number", abort: true })
      .min(1, { error: "must be 1 or more" })
      .max(MAX_PAGE, { error: `must be at most ${MAX_PAGE}` })
      .default(1),
    limit: z.coerce
      .number({ error: "must be a whole number" })
      .int({ error: "must be a whole number" })
      .min(1, { error: "must be 1 or more" })
      .default(defaultLimit)
      .transform((n) => Math.min(n, PAGE_SIZE.max)),
  });
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
}

export const pagination = (page: number, limit: number, total: number): Pagination => ({
  page,
  limit,
  total,
  pages: Math.max(1, Math.ceil(total / limit)),
});

export const password = z
  .string({ error: "must be a string" })
  .min(8, { error: "must be at least 8 characters" })
  .max(128, { error: "must be at most 128 characters" });

/** A password reset's SSH choice for a VPS (issue 30 §5); compute keeps it on the machine. */
export const sshPasswordLogin = z.boolean({ error: "must be true or false" }).meta({
  description:
    "A VPS: whether root may log in over SSH with a password (its sshd's PasswordAuthentication and " +
    "PermitRootLogin). Off when never chosen: a VPS is reached with its SSH keys; omitted keeps the " +
    "machine's current choice. A dedicated server's rebuild ignores it.",
});

/**
 * A hostname as orders accept it (customer and reseller orders share it): RFC 1123 labels of 1 to
 * 63 letters, digits and hyphens, neither starting nor ending with a hyphen, joined by single dots;
 * 253 characters at most.
 */
export const hostname = z
  .string({ error: "must be a string" })
  .regex(
    /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/,
    {
      error:
        "must be a valid hostname (labels of 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen, separated by single dots; 253 characters at most)",
    },
  );

/**
 * Control characters and the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
 * U+2066-U+2069): a name shown in a list must read as what it is, not reorder what follows it.
 */
const UNSHOWABLE = /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u;

/** A display name (SSH keys): trimmed, 1 to 100 characters, nothing that hides or reorders text. */
export const displayName = z
  .string({ error: "is required" })
  .trim()
  .min(1, { error: "is required" })
  .max(100)
  .refine((v) => !UNSHOWABLE.test(v), {
    error: "must not contain control characters or bidirectional formatting characters",
  });

/**
 * A money amount in the request: a JSON number or a decimal string ("0.07"), read from the exact
 * text the client wrote (see `exactNumbers`), never through a binary float. Output: the decimal
 * string billing takes, with 4 decimals. Refused (platform money.ts, in its words): zero,
 * negative, more than 4 decimals (trailing zeros aside), exponent forms such as 1e-2 (write 0.01),
 * more than 14 integer digits.
 */
export const moneyAmount = z
  .union([z.number(), z.string()], { error: "must be a number or a decimal string" })
  .meta({ description: "Amount with up to 4 decimals, as a JSON number or a decimal string" })
  .transform((v, ctx) => {
    const read = readPositiveMoney(typeof v === "number" ? String(v) : v);
    if (read.ok) return formatMoney(read.units);
    ctx.issues.push({ code: "custom", message: read.refusal, input: v });
    return z.NEVER;
  });

/**
 * Wraps a body's object schema so the named number fields reach it as the exact source text the
 * client wrote (kept by the body parser), not as the float JSON.parse made of them.
 */
export function exactNumbers<T extends z.ZodType>(keys: readonly string[], schema: T) {
  return z.preprocess((body) => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
    const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
    for (const k of keys) {
      const source = typeof copy[k] === "number" ? numberSource(body, k) : undefined;
      if (source !== undefined) copy[k] = source;
    }
    return copy;
  }, schema);
}
