import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { PAGE_SIZE, pageWindow } from "./paging.ts";

describe("pageWindow", () => {
  it("reads an unset page as the first and an unset limit as the list's default", () => {
    assert.deepEqual(pageWindow(0, 0), { page: 1, limit: 20, offset: 0 });
    assert.deepEqual(pageWindow(0, 0, PAGE_SIZE.machines), { page: 1, limit: 50, offset: 0 });
    assert.deepEqual(pageWindow(3, 10), { page: 3, limit: 10, offset: 20 });
  });

  it("never pages more than 200 rows, and every page starts where the one before it ended", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (page, limit) => {
          const w = pageWindow(page, limit);
          assert.ok(w.limit >= 1 && w.limit <= PAGE_SIZE.max);
          assert.equal(w.offset, (w.page - 1) * w.limit);
          assert.equal(pageWindow(w.page + 1, limit).offset, w.offset + w.limit);
        },
      ),
    );
  });
});
