import type { Redis } from "ioredis";

// INCR and EXPIRE in one script: atomic, so a crash can never leave a counter without expiry.
const hourlyScript = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n`;

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
  const count = Number(await redis.eval(hourlyScript, 1, `${ns}:rl:${id}:${windowStart}`, ttl));
  return { limit, count, remaining: Math.max(0, limit - count), reset };
}
