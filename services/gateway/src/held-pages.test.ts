import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { JsonText } from "./envelope.ts";
import { HeldPages } from "./held-pages.ts";

describe("held machine pages", () => {
  it("hold at most their bound, drop the least recently used first, and give back what was set last", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.array(
          fc.record({
            set: fc.boolean(),
            key: fc.integer({ min: 0, max: 5 }),
            size: fc.integer({ min: 0, max: 25 }),
          }),
          { maxLength: 60 },
        ),
        (max, steps) => {
          const pages = new HeldPages(max);
          // Each held key's last page, least recently used first.
          let model: { key: string; version: string; size: number }[] = [];
          const chars = () => model.reduce((n, p) => n + p.size, 0);
          for (const [i, s] of steps.entries()) {
            const key = String(s.key);
            if (s.set) {
              pages.set(key, { version: String(i), data: new JsonText("x".repeat(s.size)), total: 0 });
              model = model.filter((p) => p.key !== key);
              if (s.size <= max) model.push({ key, version: String(i), size: s.size });
              while (chars() > max) model.shift();
            } else {
              const m = model.find((p) => p.key === key);
              assert.equal(pages.get(key)?.version, m?.version);
              if (m) model = [...model.filter((p) => p.key !== key), m];
            }
            assert.equal(pages.chars, chars());
            assert.equal(pages.size, model.length);
          }
        },
      ),
    );
  });
});
