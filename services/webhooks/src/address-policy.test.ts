import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isLocalName, isPublicAddress } from "./address-policy.ts";
import { backoffSeconds } from "./backoff.ts";

describe("webhook address policy", () => {
  it("allows public unicast addresses, also inside IPv4-mapped and NAT64 IPv6", () => {
    for (const a of [
      "8.8.8.8",
      "1.1.1.1",
      "93.184.216.34",
      "2606:4700:4700::1111",
      "2a00:1450:4001:80b::200e",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
    ]) {
      assert.equal(isPublicAddress(a), true, a);
    }
  });

  it("refuses every special-purpose IPv4 range", () => {
    for (const a of [
      "0.0.0.0",
      "0.1.2.3",
      "10.0.0.1",
      "100.64.0.1",
      "127.0.0.1",
      "127.255.255.254",
      "169.254.169.254",
      "172.16.0.1",
      "192.168.1.1",
      "192.0.0.1",
      "192.0.2.1",
      "192.88.99.1",
      "198.18.0.1",
      "198.51.100.1",
      "203.0.113.1",
      "224.0.0.1",
      "240.0.0.1",
      "255.255.255.255",
    ]) {
      assert.equal(isPublicAddress(a), false, a);
    }
  });

  it("refuses every special-purpose IPv6 range", () => {
    for (const a of [
      "::",
      "::1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "fec0::1",
      "ff02::1",
      "100::1",
      "2001:db8::1",
      "2001:2::1",
      "3fff::1",
      "5f00::1",
      "4000::1",
    ]) {
      assert.equal(isPublicAddress(a), false, a);
    }
  });

  it("refuses IPv4 hidden in IPv6 when it is not public, and the deprecated tunnels outright", () => {
    for (const [a, why] of [
      ["::7f00:1", "IPv4-compatible 127.0.0.1"],
      ["::127.0.0.1", "IPv4-compatible, dotted"],
      ["::a00:1", "IPv4-compatible 10.0.0.1"],
      ["::808:808", "IPv4-compatible is deprecated even for a public address"],
      ["::ffff:127.0.0.1", "IPv4-mapped"],
      ["::ffff:7f00:1", "IPv4-mapped, hex"],
      ["0:0:0:0:0:ffff:a9fe:a9fe", "IPv4-mapped 169.254.169.254"],
      ["::ffff:0:7f00:1", "IPv4-translated (RFC 6145)"],
      ["64:ff9b::7f00:1", "NAT64 of 127.0.0.1"],
      ["64:ff9b::a9fe:a9fe", "NAT64 of 169.254.169.254"],
      ["64:ff9b::c0a8:101", "NAT64 of 192.168.1.1"],
      ["64:ff9b:1::7f00:1", "local-use NAT64 (RFC 8215)"],
      ["2002:7f00:1::1", "6to4 of 127.0.0.1"],
      ["2002:a00:1::1", "6to4 of 10.0.0.1"],
      ["2002:808:808::1", "6to4 is deprecated even for a public address"],
      ["2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo"],
      ["2001::7f00:1", "Teredo"],
    ]) {
      assert.equal(isPublicAddress(a), false, `${a} (${why})`);
    }
  });

  it("judges other IPv4 spellings by the address they name", () => {
    for (const a of ["2130706433", "0x7f.1", "017700000001", "0177.0.0.1", "127.1", "0x7f000001"]) {
      assert.equal(isPublicAddress(a), false, a);
    }
  });

  it("refuses zone ids and anything that is not an address", () => {
    for (const a of ["fe80::1%eth0", "2606:4700:4700::1111%eth0", "", "example.com", "1.2.3.4.5", "[::1]"]) {
      assert.equal(isPublicAddress(a), false, a);
    }
  });

  it("knows local names by their spelling", () => {
    for (const n of [
      "localhost",
      "foo.localhost",
      "a.b.localhost",
      "intranet",
      "printer.local",
      "db.internal",
      "host.localdomain",
      "router.lan",
      "nas.home.arpa",
      "erp.corp",
    ]) {
      assert.equal(isLocalName(n), true, n);
    }
    for (const n of [
      "example.com",
      "hooks.example.com",
      "localhost.example.com",
      "mylocal.com",
      "internal.io",
    ]) {
      assert.equal(isLocalName(n), false, n);
    }
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
