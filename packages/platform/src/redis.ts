import { Redis } from "ioredis";
import type { LuaScript } from "./lua-script.ts";
import { platformScripts } from "./rate-window.ts";

export type { LuaScript, Redis };

/**
 * A client with every Lua script it will run defined before its first command: the platform's
 * (the hourly window, the cool-down) and the caller's own. With auto-pipelining, ioredis copies a
 * client's scripts into a tick's pipeline when that pipeline is made, so a script defined later
 * in the same tick is missing from it: the call failed, and ioredis then threw in a callback and
 * took the process down (a gateway's first keyed request beside a refused one, seen in CI).
 */
export function connectRedis(url: string, scripts: Record<string, LuaScript> = {}): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, enableAutoPipelining: true, lazyConnect: false });
  for (const [name, script] of Object.entries({ ...platformScripts, ...scripts }))
    redis.defineCommand(name, script);
  return redis;
}
