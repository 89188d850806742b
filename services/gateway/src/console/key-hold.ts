import { expired } from "../key-check.ts";
import type { KeySync } from "../key-sync.ts";
import type { ConsoleGrant } from "./tickets.ts";

/** Why an API console closes when its key stops working (the WebSocket's close reason). */
export type KeyCloseReason = "key-revoked" | "key-expired";

/**
 * Why an API console's key no longer holds it open: revoked (or deleted: gone from the table) or
 * past its last day. Undefined while it holds, for a portal console (its session is checked
 * instead), and while this replica cannot say: no key table, or one out of step with auth, when a
 * console is kept open rather than closed on a doubt.
 */
export function keyCloseReason(
  keys: Pick<KeySync, "table" | "serving"> | undefined,
  g: ConsoleGrant,
  nowMs: number,
): KeyCloseReason | undefined {
  if (g.via !== "api" || !g.keyId || !keys?.serving()) return undefined;
  const entry = keys.table.entryById(g.customerId, g.keyId);
  if (!entry || entry.revoked) return "key-revoked";
  return expired(entry, nowMs) ? "key-expired" : undefined;
}
