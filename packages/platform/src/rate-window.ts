import type { Redis } from "ioredis";
import { reserveScript } from "./cooldown-script.ts";
import type { LuaScript } from "./lua-script.ts";

// INCR and EXPIRE in one script: atomic, so a crash can never leave a counter without expiry.
const hourlyScript = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n`;

type WithScripts = Redis & {
  hbHourly(key: string, ttl: number): Promise<number>;
  hbReserve(
    key: string,
    now: number,
    window: number,
    limit: number,
    member: string,
  ): Promise<[number, number]>;
};

/** Defined on every client connectRedis makes; ioredis calls them by SHA (EVALSHA). */
export const platformScripts = {
  hbHourly: { numberOfKeys: 1, lua: hourlyScript },
  hbReserve: { numberOfKeys: 1, lua: reserveScript },
} satisfies Record<string, LuaScript>;

/** The client with the platform's scripts, which connectRedis defined when it made it. */
export const scripts = (redis: Redis) => redis as WithScripts;

export interface WindowCount {
  limit: number;
  count: number;
  remaining: number;
  /** Unix seconds when the window restarts. */
  reset: number;
}

/** Fixed hourly window per key, aligned to the clock hour; counts this request. */
export async function countHourly(
  redis: Redis,
  ns: string,
  id: string,
  limit: number,
  nowMs = Date.now(),
): Promise<WindowCount> {
  const windowStart = Math.floor(nowMs / 3_600_000) * 3600;
  const reset = windowStart + 3600;
  const ttl = reset - Math.floor(nowMs / 1000) + 60;
  const count = Number(await scripts(redis).hbHourly(`${ns}:rl:${id}:${windowStart}`, ttl));
  return { limit, count, remaining: Math.max(0, limit - count), reset };
}
