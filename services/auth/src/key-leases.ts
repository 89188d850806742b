import type { LuaScript, Redis } from "@hb/platform/redis";

/**
 * The shared record of which gateway streams are live and what each has applied, in Redis so that
 * every auth replica sees the acknowledgements of streams held by the others. Times are Redis's
 * own clock (TIME), so no two auth hosts' clocks are compared.
 *
 *   live      hash  stream id → last renewal (ms)
 *   base      hash  stream id → the snapshot's version (every change up to it is applied)
 *   acked:<v> set   stream ids that applied change v
 *   evicted:<id>    a stream that missed a change: its renewals are refused from now on
 */
export interface LeaseKeys {
  live: string;
  base: string;
  ackedPrefix: string;
  evictedPrefix: string;
  version: string;
  channel: string;
}

export const leaseKeys = (ns: string): LeaseKeys => ({
  live: `${ns}:keys:live`,
  base: `${ns}:keys:base`,
  ackedPrefix: `${ns}:keys:acked:`,
  evictedPrefix: `${ns}:keys:evicted:`,
  version: `${ns}:keys:version`,
  channel: `${ns}:keys:changes`,
});

const nowMs = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// KEYS: live, base, evicted:<id>. ARGV: id, acked prefix, baseline ('' to keep), versions...
// Returns 0 when the stream was evicted or its lease already ran out (a waiter may have stopped
// waiting for it): it must not serve on, and resyncs on a new stream.
const renewScript = `
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
if ARGV[3] == '' and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
${nowMs}
redis.call('HSET', KEYS[1], ARGV[1], now)
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
for i = 4, #ARGV do
  local k = ARGV[2] .. ARGV[i]
  redis.call('SADD', k, ARGV[1])
  redis.call('EXPIRE', k, 600)
end
return 1`;

// KEYS: live, base. ARGV: acked prefix, version, lease ms, evicted prefix, evict (1/0).
// Returns the live streams that have neither applied the change nor let their lease run out;
// with evict=1 they are evicted first (their lease then runs out, since nothing renews it).
const pendingScript = `
${nowMs}
local v = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
local live = redis.call('HGETALL', KEYS[1])
local pending = {}
for i = 1, #live, 2 do
  local id = live[i]
  local renewed = tonumber(live[i + 1])
  if now > renewed + lease then
    redis.call('HDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id)
  elseif tonumber(redis.call('HGET', KEYS[2], id) or '0') < v
      and redis.call('SISMEMBER', ARGV[1] .. ARGV[2], id) == 0 then
    if ARGV[5] == '1' then redis.call('SET', ARGV[4] .. id, '1', 'PX', lease * 4) end
    table.insert(pending, id)
  end
end
return pending`;

type WithLeaseScripts = Redis & {
  hbKeyRenew(live: string, base: string, evicted: string, ...argv: string[]): Promise<number>;
  hbKeyPending(live: string, base: string, ...argv: string[]): Promise<string[]>;
};

/** For connectRedis, which defines them before the client's first command. */
export const keyLeaseScripts = {
  hbKeyRenew: { numberOfKeys: 3, lua: renewScript },
  hbKeyPending: { numberOfKeys: 2, lua: pendingScript },
} satisfies Record<string, LuaScript>;

/** The client with the lease scripts (auth's client is made with keyLeaseScripts). */
const scripts = (redis: Redis) => redis as WithLeaseScripts;

export async function renewLease(
  redis: Redis,
  k: LeaseKeys,
  streamId: string,
  baseline: bigint | undefined,
  versions: bigint[],
): Promise<boolean> {
  const ok = await scripts(redis).hbKeyRenew(
    k.live,
    k.base,
    k.evictedPrefix + streamId,
    streamId,
    k.ackedPrefix,
    baseline === undefined ? "" : String(baseline),
    ...versions.map(String),
  );
  return ok === 1;
}

/** The stream will never renew again: refused from now on, waited for until its lease runs out. */
export async function endLease(redis: Redis, k: LeaseKeys, streamId: string, leaseMs: number): Promise<void> {
  await redis.set(k.evictedPrefix + streamId, "1", "PX", leaseMs * 4);
}

/** The replica said it stopped serving from this stream: nothing waits for it any more. */
export async function releaseLease(
  redis: Redis,
  k: LeaseKeys,
  streamId: string,
  leaseMs: number,
): Promise<void> {
  await redis
    .multi()
    .set(k.evictedPrefix + streamId, "1", "PX", leaseMs * 4)
    .hdel(k.live, streamId)
    .hdel(k.base, streamId)
    .exec();
}

export async function pendingStreams(
  redis: Redis,
  k: LeaseKeys,
  version: bigint,
  leaseMs: number,
  evict: boolean,
): Promise<string[]> {
  return scripts(redis).hbKeyPending(
    k.live,
    k.base,
    k.ackedPrefix,
    String(version),
    String(leaseMs),
    k.evictedPrefix,
    evict ? "1" : "0",
  );
}
