import { createHash } from "node:crypto";
import type { Request } from "express";

/** The Idempotency-Key header and a hash of the body, for calls that move money. */
export function idempotencyOf(req: Request): { idempotencyKey: string; requestHash: string } {
  const key = req.get("idempotency-key") ?? "";
  const requestHash = createHash("sha256")
    .update(`${req.method} ${req.path} ${JSON.stringify(req.body ?? {})}`)
    .digest("hex");
  return { idempotencyKey: key.trim(), requestHash };
}
