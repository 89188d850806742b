import { randomUUID } from "node:crypto";
import { EventEmitter, on } from "node:events";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type {
  AckKeysRequest,
  KeyDistributionService,
  WatchKeysRequest,
  WatchKeysResponseSchema,
} from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import type { Logger, Sql } from "@hb/platform";
import type { Redis } from "@hb/platform/redis";
import {
  endLease,
  type LeaseKeys,
  leaseKeys,
  pendingStreams,
  releaseLease,
  renewLease,
} from "./key-leases.ts";
import { loadAllEntries, loadCustomerEntries, loadKeySettings } from "./key-table.ts";

type Item = MessageInitShape<typeof WatchKeysResponseSchema>;

/** What a handler calls after committing a change a key check reads; returns once it is applied. */
export interface KeyChanges {
  customer(customerId: string): Promise<void>;
  settings(): Promise<void>;
}

export const noKeyChanges: KeyChanges = { customer: async () => {}, settings: async () => {} };

export interface DistributionOptions {
  leaseMs: number;
  heartbeatMs: number;
  /** How long a change waits for every live stream before it gives the late ones up. */
  ackWaitMs: number;
}

interface Change {
  v: string;
  customerId?: string;
}

/**
 * The key table's distribution (docs/architecture.md, "Key table"). A change is numbered (INCR),
 * announced on a Redis channel every auth replica listens to, and each replica pushes the
 * affected rows, read after the change committed, to its own streams. The caller then waits
 * until every live stream, whichever replica holds it, has acknowledged the change or lost its
 * lease.
 */
export function createKeyDistribution(
  sql: Sql,
  redis: Redis,
  ns: string,
  opts: DistributionOptions,
  log: Logger,
) {
  const keys: LeaseKeys = leaseKeys(ns);
  const streams = new Map<string, EventEmitter>();
  const emit = (item: Item) => {
    for (const e of streams.values()) e.emit("item", item);
  };

  // Changes are read in the order they arrive, one at a time: a later read of a customer's rows
  // is never overtaken by an earlier one, so a stream's last word on a customer is the newest.
  const subscriber = redis.duplicate();
  let tail: Promise<void> = Promise.resolve();
  subscriber.on("message", (_channel: string, text: string) => {
    tail = tail
      .then(() => push(JSON.parse(text) as Change))
      .catch((err: unknown) => {
        // A stream that misses this change does not acknowledge it, and is given up by the waiter.
        log.warn("key table change not pushed", { err });
      });
  });
  const subscribed = subscriber.subscribe(keys.channel);

  async function push(c: Change): Promise<void> {
    if (streams.size === 0) return;
    const version = BigInt(c.v);
    if (c.customerId) {
      const entries = await loadCustomerEntries(sql, c.customerId);
      emit({ version, item: { case: "customer", value: { customerId: c.customerId, entries } } });
    } else {
      emit({ version, item: { case: "settings", value: await loadKeySettings(sql) } });
    }
  }

  const heartbeat = setInterval(
    () => emit({ version: 0n, item: { case: "heartbeat", value: {} } }),
    opts.heartbeatMs,
  );
  heartbeat.unref();

  async function announce(change: Omit<Change, "v">): Promise<void> {
    const version = BigInt(await redis.incr(keys.version));
    await redis.publish(keys.channel, JSON.stringify({ ...change, v: String(version) }));
    const deadline = performance.now() + opts.ackWaitMs;
    let evicted = false;
    for (;;) {
      const late = performance.now() > deadline;
      const pending = await pendingStreams(redis, keys, version, opts.leaseMs, late);
      if (pending.length === 0) return;
      if (late && !evicted) {
        evicted = true;
        log.warn("gateway key streams did not acknowledge a change in time; given up", {
          version: String(version),
          streams: pending.length,
        });
      }
      // An evicted stream is waited out until its lease has run out (the script drops it then).
      await new Promise((r) => setTimeout(r, late ? 50 : 2));
    }
  }

  const changes: KeyChanges = {
    customer: (customerId) => announce({ customerId }),
    settings: () => announce({}),
  };

  const service: Partial<ServiceImpl<typeof KeyDistributionService>> = {
    async *watchKeys(req: WatchKeysRequest, ctx: HandlerContext): AsyncGenerator<Item> {
      await subscribed;
      const streamId = randomUUID();
      const emitter = new EventEmitter();
      // Listening starts before the baseline is read, so no change after it can be missed.
      const items = on(emitter, "item", { signal: ctx.signal });
      streams.set(streamId, emitter);
      try {
        const baseline = BigInt((await redis.get(keys.version)) ?? "0");
        // Every change up to the baseline committed before it was numbered, so this read has it.
        const [settings, entries] = await Promise.all([loadKeySettings(sql), loadAllEntries(sql)]);
        await renewLease(redis, keys, streamId, baseline, []);
        log.info("gateway key stream opened", { replica: req.replica, streamId, keys: entries.length });
        // In chunks when the replica asks: one message of a large table would pass gRPC's size
        // limit, and the replica could then never resync (issue 13). Nothing is sent between them.
        const chunk = req.snapshotChunk > 0 ? req.snapshotChunk : Math.max(1, entries.length);
        for (let from = 0; from === 0 || from < entries.length; from += chunk) {
          yield {
            streamId,
            version: baseline,
            item: {
              case: "snapshot",
              value: {
                settings,
                entries: entries.slice(from, from + chunk),
                leaseMs: opts.leaseMs,
                more: from + chunk < entries.length,
              },
            },
          };
        }
        for await (const [item] of items as AsyncIterable<[Item]>) {
          // Changes the snapshot already holds were read before it: sending them would go back.
          if (item.version !== undefined && item.version !== 0n && BigInt(item.version) <= baseline) continue;
          yield { ...item, streamId };
        }
      } catch (err) {
        if (!ctx.signal.aborted) throw err;
      } finally {
        streams.delete(streamId);
        // The replica may not know yet that the stream ended: it is waited out, never trusted on.
        await endLease(redis, keys, streamId, opts.leaseMs).catch(() => {});
      }
    },

    async ackKeys(req: AckKeysRequest) {
      if (req.release) {
        await releaseLease(redis, keys, req.streamId, opts.leaseMs);
        return { ok: false };
      }
      return { ok: await renewLease(redis, keys, req.streamId, undefined, req.versions) };
    },
  };

  return {
    changes,
    service,
    close: async () => {
      clearInterval(heartbeat);
      subscriber.disconnect();
    },
  };
}
