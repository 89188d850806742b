import { createHash } from "node:crypto";
import type { Request } from "express";
import { numberSource } from "./body.ts";

/**
 * A parsed body as one text whatever the order its keys were written in: object keys sorted at
 * every level, numbers as the client wrote them (so 10 and 10.0 stay apart, as the amounts read
 * from them would), no whitespace. The body parser has already bounded its depth.
 */
export function canonicalJson(value: unknown, holder?: object, key?: string): string {
  if (Array.isArray(value)) return `[${value.map((v, i) => canonicalJson(v, value, String(i))).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const o = value as Record<string, unknown>;
    const members = Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k], o, k)}`);
    return `{${members.join(",")}}`;
  }
  if (typeof value === "number" && holder && key !== undefined) {
    return numberSource(holder, key) ?? JSON.stringify(value);
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The Idempotency-Key header and a hash of the request, for calls that move money. The body is
 * hashed as its parsed value, canonicalised: a retry that writes the same JSON with its keys in
 * another order is the same request.
 */
export function idempotencyOf(req: Request): { idempotencyKey: string; requestHash: string } {
  const key = req.get("idempotency-key") ?? "";
  const requestHash = createHash("sha256")
    .update(`${req.method} ${req.path} ${canonicalJson(req.body ?? {})}`)
    .digest("hex");
  return { idempotencyKey: key.trim(), requestHash };
}
