import type { Redis } from "ioredis";
import { newId } from "./ids.ts";

// Sliding window of reservations in a sorted set. Check-and-add is one script, so concurrent
// calls can never exceed the limit; a reservation can be released if the backend refuses.
const reserveScript = `
local key, now, window, limit, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local n = redis.call('ZCARD', key)
if n >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', key, now, member)
redis.call('PEXPIRE', key, window)
return {1, 0}`;

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
  const member = newId();
  const windowMs = rule.windowSeconds * 1000;
  const [ok, waitMs] = (await redis.eval(reserveScript, 1, key, nowMs, windowMs, rule.limit, member)) as [
    number,
    number,
  ];
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
