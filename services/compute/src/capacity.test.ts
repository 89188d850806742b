import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { type Held, type PlacementRequest, weigh } from "./capacity.ts";
import type { HostCapacity } from "./driver.ts";

const PROVIDERS = ["lxd", "simulator"];

const request = fc.record({
  serviceId: fc.uuid(),
  provider: fc.constantFrom(...PROVIDERS),
  memoryMb: fc.integer({ min: 1, max: 8192 }),
  diskGb: fc.integer({ min: 1, max: 200 }),
});
const held = fc.record({
  machines: fc.nat(20),
  memoryMb: fc.nat(40_000),
  diskGb: fc.nat(2000),
});
const host = fc.record({
  memoryMb: fc.nat(48_000),
  diskGb: fc.oneof(fc.nat(3000), fc.constant(Number.POSITIVE_INFINITY)),
  full: fc.option(fc.constant("every LXD host's storage pool has less than 5 GB free"), { nil: undefined }),
});
const world = fc.record({
  held: fc.dictionary(fc.constantFrom(...PROVIDERS), held),
  hosts: fc.dictionary(fc.constantFrom(...PROVIDERS), host),
  max: fc.nat(25),
  reqs: fc.uniqueArray(request, { maxLength: 30, selector: (r) => r.serviceId }),
});

const totals = (h: Held | undefined, taken: PlacementRequest[]) => ({
  machines: (h?.machines ?? 0) + taken.length,
  memoryMb: (h?.memoryMb ?? 0) + taken.reduce((n, r) => n + r.memoryMb, 0),
  diskGb: (h?.diskGb ?? 0) + taken.reduce((n, r) => n + r.diskGb, 0),
});

describe("the capacity rule", () => {
  it("never lets a provider's machines pass the maximum, its hosts' memory or disk", () => {
    fc.assert(
      fc.property(world, (w) => {
        const hosts = new Map<string, HostCapacity>(Object.entries(w.hosts));
        const refused = weigh(new Map(Object.entries(w.held)), w.reqs, hosts, w.max);
        for (const p of PROVIDERS) {
          const taken = w.reqs.filter((r) => r.provider === p && !refused.has(r.serviceId));
          if (taken.length === 0) continue;
          const t = totals(w.held[p], taken);
          const h = hosts.get(p);
          if (w.max > 0) assert.ok(t.machines <= w.max);
          if (h) {
            assert.equal(h.full, undefined, "a full host takes nothing");
            assert.ok(t.memoryMb <= h.memoryMb && t.diskGb <= h.diskGb);
          }
        }
      }),
    );
  });

  it("refuses a request only when taking it would pass a bound, given those taken before it", () => {
    fc.assert(
      fc.property(world, (w) => {
        const hosts = new Map<string, HostCapacity>(Object.entries(w.hosts));
        const refused = weigh(new Map(Object.entries(w.held)), w.reqs, hosts, w.max);
        w.reqs.forEach((r, i) => {
          const before = w.reqs
            .slice(0, i)
            .filter((x) => x.provider === r.provider && !refused.has(x.serviceId));
          const t = totals(w.held[r.provider], [...before, r]);
          const h = hosts.get(r.provider);
          const passes =
            (w.max > 0 && t.machines > w.max) ||
            Boolean(h?.full) ||
            (h !== undefined && (t.memoryMb > h.memoryMb || t.diskGb > h.diskGb));
          assert.equal(refused.has(r.serviceId), passes, JSON.stringify({ r, t, h }));
          if (passes)
            assert.match(
              refused.get(r.serviceId) ?? "",
              new RegExp(`^No capacity .* on ${r.provider} now: `),
            );
        });
      }),
    );
  });

  it("sets no bound without a maximum or a host's figures", () => {
    const reqs = [{ serviceId: "a", provider: "simulator", memoryMb: 1e9, diskGb: 1e9 }];
    assert.equal(weigh(new Map(), reqs, new Map(), 0).size, 0);
  });
});
