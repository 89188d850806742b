import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { KeyEntrySchema, WatchKeysResponseSchema } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import fc from "fast-check";
import { KeyTable } from "./key-table.ts";

const entry = (prefix: string, customerId: string, label: string) =>
  create(KeyEntrySchema, { prefix, keyId: `id-${prefix}`, customerId, label });

const snapshot = (entries: ReturnType<typeof entry>[]) =>
  create(WatchKeysResponseSchema, {
    item: { case: "snapshot", value: { settings: { customerApiEnabled: true }, entries, leaseMs: 1000 } },
  });

const customer = (customerId: string, entries: ReturnType<typeof entry>[]) =>
  create(WatchKeysResponseSchema, { item: { case: "customer", value: { customerId, entries } } });

describe("KeyTable", () => {
  it("holds, for every prefix, what the last message about its customer said (model check)", () => {
    const prefixes = ["aaaaaaaa", "bbbbbbbb", "cccccccc", "dddddddd", "eeeeeeee"];
    const customers = ["c1", "c2", "c3"];
    // A customer's message lists some keys (each prefix belongs to one customer at most at a time).
    const message = fc.record({
      customerId: fc.constantFrom(...customers),
      keys: fc.subarray(prefixes),
      label: fc.string({ maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(message, { maxLength: 12 }), (msgs) => {
        const table = new KeyTable();
        table.apply(snapshot([]));
        const model = new Map<string, { customerId: string; label: string }>();
        for (const m of msgs) {
          // A prefix never moves between customers: keep only those free or already this one's.
          const keys = m.keys.filter((p) => !model.has(p) || model.get(p)?.customerId === m.customerId);
          for (const [p, v] of model) if (v.customerId === m.customerId) model.delete(p);
          for (const p of keys) model.set(p, { customerId: m.customerId, label: m.label });
          table.apply(
            customer(
              m.customerId,
              keys.map((p) => entry(p, m.customerId, m.label)),
            ),
          );
        }
        assert.equal(table.size, model.size);
        for (const p of prefixes) {
          const got = table.entry(p);
          const want = model.get(p);
          assert.deepEqual(got && { customerId: got.customerId, label: got.label }, want);
        }
      }),
    );
  });

  it("a snapshot replaces everything", () => {
    const table = new KeyTable();
    table.apply(snapshot([entry("aaaaaaaa", "c1", "x")]));
    table.apply(snapshot([entry("bbbbbbbb", "c2", "y")]));
    assert.equal(table.entry("aaaaaaaa"), undefined);
    assert.equal(table.entry("bbbbbbbb")?.label, "y");
  });

  it("recognises only the key auth confirmed for an id", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (key, other) => {
        const table = new KeyTable();
        assert.equal(table.matches("k1", key), undefined, "never confirmed: ask auth");
        table.confirm("k1", key);
        assert.equal(table.matches("k1", key), true);
        assert.equal(table.matches("k1", other), key === other);
        assert.equal(table.matches("k2", key), undefined);
      }),
    );
  });
});
