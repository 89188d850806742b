import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  displayKey,
  generateKey,
  hashKey,
  hashMatches,
  KEY_MARKER,
  keyFromAuthorization,
  parseKey,
} from "./api-key.ts";

describe("api key format", () => {
  it("generates <marker>_<prefix8>_<secret96> in base62 that parses back", () => {
    const k = generateKey();
    assert.match(k.full, /^hbk_[0-9A-Za-z]{8}_[0-9A-Za-z]{96}$/);
    assert.deepEqual(parseKey(k.full), { prefix: k.prefix, full: k.full });
    assert.equal(displayKey(k.prefix), `${KEY_MARKER}_${k.prefix}_…`);
  });

  it("never repeats a key", () => {
    const seen = new Set(Array.from({ length: 200 }, () => generateKey().full));
    assert.equal(seen.size, 200);
  });

  it("refuses any single-character change through the checksum", () => {
    const { full } = generateKey();
    for (const i of [13, 40, 80, full.length - 7, full.length - 1]) {
      const c = full[i] === "a" ? "b" : "a";
      assert.equal(parseKey(full.slice(0, i) + c + full.slice(i + 1)), undefined, `position ${i}`);
    }
  });

  it("refuses truncated, extended and re-marked keys", () => {
    const { full } = generateKey();
    assert.equal(parseKey(full.slice(0, -1)), undefined);
    assert.equal(parseKey(`${full}0`), undefined);
    assert.equal(parseKey(full.replace(/^hbk_/, "sk_")), undefined);
    assert.equal(parseKey(""), undefined);
  });

  it("accepts only 'Bearer <key>' as the Authorization header", () => {
    const { full } = generateKey();
    assert.ok(keyFromAuthorization(`Bearer ${full}`));
    for (const h of [
      undefined,
      "",
      full,
      `bearer ${full}`,
      `Bearer  ${full}`,
      `Bearer ${full} `,
      `Token ${full}`,
    ]) {
      assert.equal(keyFromAuthorization(h), undefined, String(h));
    }
  });

  it("hashes with the pepper and compares in constant time", () => {
    const { full } = generateKey();
    const stored = hashKey(full, "pepper-one-xxxxxxxx");
    assert.equal(hashMatches(full, "pepper-one-xxxxxxxx", stored), true);
    assert.equal(hashMatches(full, "pepper-two-xxxxxxxx", stored), false);
    assert.equal(hashMatches(generateKey().full, "pepper-one-xxxxxxxx", stored), false);
    assert.equal(hashMatches(full, "pepper-one-xxxxxxxx", Buffer.alloc(3)), false);
  });
});
