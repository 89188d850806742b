import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isBlockedAddress } from "./address-policy.ts";
import { backoffSeconds } from "./backoff.ts";

describe("webhook address policy", () => {
  it("allows public unicast addresses", () => {
    for (const a of [
      "8.8.8.8",
      "1.1.1.1",
      "93.184.216.34",
      "2606:4700:4700::1111",
      "2a00:1450:4001:80b::200e",
    ]) {
      assert.equal(isBlockedAddress(a), false, a);
    }
  });
  it("blocks every special-purpose range", () => {
    for (const a of [
      "0.0.0.0",
      "0.1.2.3",
      "10.0.0.1",
      "100.64.0.1",
      "127.0.0.1",
      "169.254.169.254",
      "172.16.0.1",
      "192.168.1.1",
      "192.0.2.1",
      "198.18.0.1",
      "198.51.100.1",
      "203.0.113.1",
      "224.0.0.1",
      "240.0.0.1",
      "255.255.255.255",
      "::",
      "::1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "ff02::1",
      "2001:db8::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "64:ff9b::a00:1",
      "2002:a00:1::1",
      "not an address",
    ]) {
      assert.equal(isBlockedAddress(a), true, a);
    }
  });
  it("allows loopback only when the test setting says so", () => {
    assert.equal(isBlockedAddress("127.0.0.1", true), false);
    assert.equal(isBlockedAddress("::1", true), false);
    assert.equal(isBlockedAddress("10.0.0.1", true), true);
  });
});

describe("back-off", () => {
  it("doubles from the base delay after each failure", () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => backoffSeconds(60, n)),
      [60, 120, 240, 480],
    );
    assert.deepEqual(
      [1, 2].map((n) => backoffSeconds(10, n)),
      [10, 20],
    );
  });
});
