import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { reserveCooldown } from "./cooldown.ts";
import { countHourly } from "./rate-window.ts";
import { connectRedis } from "./redis.ts";

const redis = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const ns = `unit${process.pid}${Date.now()}`;
after(async () => {
  const keys = await redis.keys(`${ns}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe("cool-downs (real Redis)", () => {
  it("never lets concurrent calls exceed the limit", async () => {
    const rule = { action: "power", limit: 10, windowSeconds: 60 };
    const results = await Promise.all(
      Array.from({ length: 40 }, () => reserveCooldown(redis, ns, rule, "p1", "svc1")),
    );
    assert.equal(results.filter((r) => r.ok).length, 10);
    const refused = results.find((r) => !r.ok);
    assert.ok(refused && !refused.ok && refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60);
  });

  it("counts per person and per resource", async () => {
    const rule = { action: "reinstall", limit: 1, windowSeconds: 300 };
    assert.equal((await reserveCooldown(redis, ns, rule, "p1", "a")).ok, true);
    assert.equal((await reserveCooldown(redis, ns, rule, "p1", "a")).ok, false);
    assert.equal((await reserveCooldown(redis, ns, rule, "p1", "b")).ok, true);
    assert.equal((await reserveCooldown(redis, ns, rule, "p2", "a")).ok, true);
  });

  it("gives a released reservation back, unless failures count", async () => {
    const rule = { action: "password", limit: 1, windowSeconds: 600 };
    const r = await reserveCooldown(redis, ns, rule, "p1", "x");
    assert.ok(r.ok);
    await r.release();
    assert.equal((await reserveCooldown(redis, ns, rule, "p1", "x")).ok, true);
    const sticky = { action: "dpower", limit: 1, windowSeconds: 60, keepOnFailure: true };
    const s = await reserveCooldown(redis, ns, sticky, "p1", "all");
    assert.ok(s.ok);
    await s.release();
    assert.equal((await reserveCooldown(redis, ns, sticky, "p1", "all")).ok, false);
  });

  it("opens again when the window has passed", async () => {
    const rule = { action: "w", limit: 1, windowSeconds: 60 };
    const t0 = 1_700_000_000_000;
    assert.equal((await reserveCooldown(redis, ns, rule, "p", "r", t0)).ok, true);
    const blocked = await reserveCooldown(redis, ns, rule, "p", "r", t0 + 59_000);
    assert.deepEqual(blocked, { ok: false, retryAfterSeconds: 1 });
    assert.equal((await reserveCooldown(redis, ns, rule, "p", "r", t0 + 60_001)).ok, true);
  });
});

describe("hourly window (real Redis)", () => {
  it("counts atomically and always leaves the counter with an expiry", async () => {
    const now = Date.UTC(2026, 0, 1, 10, 30);
    const counts = await Promise.all(Array.from({ length: 25 }, () => countHourly(redis, ns, "k1", 20, now)));
    assert.deepEqual(
      counts.map((c) => c.count).sort((a, b) => a - b),
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    const last = counts.find((c) => c.count === 25)!;
    assert.equal(last.remaining, 0);
    assert.equal(last.reset, Date.UTC(2026, 0, 1, 11) / 1000);
    const ttl = await redis.ttl(`${ns}:rl:k1:${Date.UTC(2026, 0, 1, 10) / 1000}`);
    assert.ok(ttl > 0, `ttl ${ttl}`);
  });
});

describe("Lua scripts on an auto-pipelined client (real Redis)", () => {
  // ioredis copies a client's scripts into a tick's pipeline when the pipeline is made: a script
  // first defined after another command in the same tick was missing from it, and the call failed.
  it("answers a client's first script call made in the same tick as another command", async () => {
    const fresh = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", onUncaught);
    try {
      const [, window, cooldown] = await Promise.allSettled([
        fresh.get(`${ns}:other`),
        countHourly(fresh, ns, "first", 10),
        reserveCooldown(fresh, ns, { action: "power", limit: 1, windowSeconds: 60 }, "p9", "first"),
      ]);
      assert.deepEqual(
        [window.status, window.status === "fulfilled" && window.value.count],
        ["fulfilled", 1],
        String(window.status === "rejected" && window.reason),
      );
      assert.equal(cooldown.status === "fulfilled" && cooldown.value.ok, true);
      await fresh.ping();
      assert.deepEqual(uncaught, []);
    } finally {
      process.off("uncaughtException", onUncaught);
      await fresh.quit();
    }
  });
});
