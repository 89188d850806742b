import { type Logger, throttleSubject } from "@hb/platform";
import type { LuaScript, Redis } from "@hb/platform/redis";

export interface AuthThrottleOptions {
  /** Failures an address may make in a window before its refusals are delayed. */
  freeFailures: number;
  /** The counting window; it starts at an address's first failure and is not extended. */
  windowMs: number;
  /** Delay of the first slowed refusal; each further failure doubles it, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest the counter's Redis call may take; past it the refusal goes out undelayed. */
  redisTimeoutMs?: number;
}

export interface AuthThrottle {
  /**
   * Counts one failed authentication from `sourceIp` and resolves when its refusal may be sent
   * (at once while the address is under its allowance). Never rejects.
   */
  failed(sourceIp: string): Promise<number>;
}

// INCR and PEXPIRE in one script: a counter is never left without its expiry, and each failure
// costs one round trip and one key whatever the address sends.
const countScript = `
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

type WithScript = Redis & { hbAuthFail(key: string, windowMs: number): Promise<number> };

/** For connectRedis, which defines it before the client's first command. */
export const authThrottleScripts = {
  hbAuthFail: { numberOfKeys: 1, lua: countScript },
} satisfies Record<string, LuaScript>;

/** The delay for the `count`-th failure of a window. */
function delayFor(count: number, o: AuthThrottleOptions): number {
  const over = count - o.freeFailures;
  if (over <= 0) return 0;
  // Capped before the power so a long run of failures cannot overflow to Infinity.
  return Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** Math.min(over - 1, 30));
}

/**
 * Slows failed authentication per source address: after `freeFailures` failures in a window,
 * each further refusal is held for a growing delay before it is sent. Counted in Redis, so every
 * gateway replica sees the same count. Only failures are counted and delayed: a request with a
 * valid key is never looked up here, so it is served at once from an address under attack.
 */
export function createAuthThrottle(
  redis: Redis,
  ns: string,
  opts: AuthThrottleOptions,
  log: Logger,
): AuthThrottle {
  const r = redis as WithScript;
  const timeoutMs = opts.redisTimeoutMs ?? 250;
  return {
    async failed(sourceIp) {
      if (opts.maxDelayMs <= 0 || opts.baseDelayMs <= 0) return 0;
      const key = `${ns}:authfail:${throttleSubject(sourceIp)}`;
      let timer: NodeJS.Timeout | undefined;
      // Redis trouble must not turn a refusal into an error or a hang: the refusal goes out
      // undelayed (keys cannot be checked without Redis anyway, so nothing is guessed meanwhile).
      const count = await Promise.race([
        r.hbAuthFail(key, opts.windowMs).then(Number),
        new Promise<number>((resolve) => {
          timer = setTimeout(() => resolve(0), timeoutMs);
        }),
      ]).catch((err: unknown) => {
        log.warn("auth failure counter unavailable", { err });
        return 0;
      });
      clearTimeout(timer);
      const delay = delayFor(count, opts);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      return delay;
    },
  };
}
