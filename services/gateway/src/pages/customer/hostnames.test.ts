import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { hostname as hostnameRule } from "../../schemas.ts";
import { numberedHostnames } from "./hostnames.ts";

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/);
const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join("."));

describe("numberedHostnames", () => {
  it("numbers the first label, keeping the domain typed", () => {
    assert.deepEqual(numberedHostnames("web", 3), ["web-1", "web-2", "web-3"]);
    assert.deepEqual(numberedHostnames("web.example.com", 2), ["web-1.example.com", "web-2.example.com"]);
  });

  it("leaves one machine's name, and no name, as they are", () => {
    assert.deepEqual(numberedHostnames("web.example.com", 1), ["web.example.com"]);
    assert.deepEqual(numberedHostnames("", 3), ["", "", ""]);
  });

  it("gives distinct names the API accepts, for any name it accepts with room for the number", () => {
    fc.assert(
      fc.property(name, fc.integer({ min: 2, max: 50 }), (h, n) => {
        const names = numberedHostnames(h, n);
        assert.equal(names.length, n);
        assert.equal(new Set(names).size, n, "distinct");
        for (const x of names) assert.ok(hostnameRule.safeParse(x).success, x);
        assert.ok(names.every((x) => x.endsWith(h.slice(h.indexOf(".") < 0 ? h.length : h.indexOf(".")))));
      }),
    );
  });
});
