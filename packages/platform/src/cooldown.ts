import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { scripts } from "./rate-window.ts";

export interface CooldownRule {
  /** Name in the key, e.g. "power". */
  action: string;
  limit: number;
  windowSeconds: number;
  /** Failed attempts still count (dedicated power): never released. */
  keepOnFailure?: boolean;
}

export type Reservation =
  | { ok: true; release: () => Promise<void> }
  | { ok: false; retryAfterSeconds: number };

export async function reserveCooldown(
  redis: Redis,
  ns: string,
  rule: CooldownRule,
  personId: string,
  resource: string,
  nowMs = Date.now(),
): Promise<Reservation> {
  const key = `${ns}:cd:${rule.action}:${personId}:${resource}`;
  // Only unique within the window's set: randomUUID draws from a buffer of random bytes, where the
  // time-ordered newId fetched new random bytes from the system on every call (2% of the
  // gateway's CPU on the pay path, docs/benchmarks.md "Issue 31 §2, pays").
  const member = randomUUID();
  const windowMs = rule.windowSeconds * 1000;
  const [ok, waitMs] = await scripts(redis).hbReserve(key, nowMs, windowMs, rule.limit, member);
  if (ok === 1) {
    return {
      ok: true,
      release: async () => {
        if (!rule.keepOnFailure) await redis.zrem(key, member);
      },
    };
  }
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}
