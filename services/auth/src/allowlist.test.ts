import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { allowlistPermits, parseAllowlist } from "./allowlist.ts";

describe("parseAllowlist", () => {
  it("accepts addresses and CIDR ranges separated by commas or newlines", () => {
    const r = parseAllowlist("203.0.113.5, 198.51.100.0/24\n2001:db8::/32\r\n2001:db8::1");
    assert.deepEqual(r, {
      ok: true,
      entries: ["203.0.113.5", "198.51.100.0/24", "2001:db8::/32", "2001:db8::1"],
    });
  });
  it("treats an empty list as any source", () => {
    assert.deepEqual(parseAllowlist("  \n , "), { ok: true, entries: [] });
  });
  it("refuses a bad entry by name", () => {
    const r = parseAllowlist("10.0.0.1, 10.0.0.300, 10.0.0.2");
    assert.equal(r.ok, false);
    assert.match((r as { message: string }).message, /"10\.0\.0\.300"/);
  });
  it("refuses a bad prefix length and legacy shorthand", () => {
    assert.equal(parseAllowlist("10.0.0.0/33").ok, false);
    assert.equal(parseAllowlist("10.1").ok, false);
    assert.equal(parseAllowlist("2001:db8::/129").ok, false);
  });
  it("accepts 50 entries and refuses 51", () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `10.0.${i}.1`).join(",");
    assert.equal(parseAllowlist(list(50)).ok, true);
    assert.equal(parseAllowlist(list(51)).ok, false);
  });
});

describe("allowlistPermits", () => {
  it("matches single addresses and ranges of both families", () => {
    const entries = ["203.0.113.5", "198.51.100.0/24", "2001:db8::/32"];
    assert.equal(allowlistPermits(entries, "203.0.113.5"), true);
    assert.equal(allowlistPermits(entries, "198.51.100.77"), true);
    assert.equal(allowlistPermits(entries, "2001:db8:1::5"), true);
    assert.equal(allowlistPermits(entries, "203.0.113.6"), false);
    assert.equal(allowlistPermits(entries, "2001:db9::1"), false);
  });
  it("treats an IPv4-mapped IPv6 source as IPv4", () => {
    assert.equal(allowlistPermits(["127.0.0.1"], "::ffff:127.0.0.1"), true);
  });
  it("lets any source through an empty list and refuses garbage sources", () => {
    assert.equal(allowlistPermits([], "192.0.2.1"), true);
    assert.equal(allowlistPermits(["192.0.2.1"], "not-an-ip"), false);
  });
});
