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
  failFastWhileDown(redis);
  return redis;
}

/**
 * Once a connection has been up and is lost, a command fails at once ("Stream isn't writeable",
 * which callers answer 503) instead of waiting in ioredis's offline queue for two reconnection
 * attempts: those back off to 2 s each, so every page and keyed request of a Redis outage took
 * up to 5 s to be refused. Before the first connection the queue stays on, so a service's first
 * commands wait for its start-up connection rather than failing. ioredis reads the option at each
 * command, so switching it on the connection's events is enough.
 */
function failFastWhileDown(redis: Redis): void {
  redis.on("ready", () => {
    redis.options.enableOfflineQueue = true;
  });
  redis.on("close", () => {
    redis.options.enableOfflineQueue = false;
  });
}
