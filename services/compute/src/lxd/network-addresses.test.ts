/** The pool arithmetic of machine networks (network.ts): which subnets and addresses customers get. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  freeAddress,
  guestFiles,
  macOf,
  parsePool,
  proxyAddressOf,
  subnetAt,
  subnetCount,
} from "./network.ts";

const toInt = (ip: string) => ip.split(".").reduce((n, p) => n * 256 + Number(p), 0);

describe("the machine network pool", () => {
  it("refuses private ranges and pools that are not networks, saying why", () => {
    for (const cidr of ["10.0.0.0/16", "172.20.0.0/16", "192.168.0.0/16"])
      assert.throws(() => parsePool(cidr), /private range/);
    assert.throws(() => parsePool("198.18.0.0/24"), /\/15 to \/23/);
    assert.throws(() => parsePool("198.18.1.0/16"), /\/15 to \/23/);
    assert.throws(() => parsePool("198.18.0.300/16"), /not an IPv4 CIDR/);
    assert.deepEqual(parsePool("198.18.0.0/15"), { base: toInt("198.18.0.0"), bits: 15 });
  });

  it("keeps the pool's first /24 for the host: the apt proxy is its first address", () => {
    const pool = parsePool("198.18.0.0/16");
    assert.equal(proxyAddressOf(pool), "198.18.0.1");
    assert.equal(subnetCount(pool, 24), 255);
    assert.deepEqual(subnetAt(pool, 24, 0), {
      bridge: "hbn0",
      subnet: "198.18.1.0/24",
      gateway: "198.18.1.1",
      hosts: { first: toInt("198.18.1.2"), last: toInt("198.18.1.254") },
    });
    assert.throws(() => subnetAt(pool, 24, 255), /no customer subnet number 255/);
  });

  it("gives the lowest address not taken, and none when the subnet is full", () => {
    const s = subnetAt(parsePool("198.18.0.0/16"), 29, 0);
    assert.equal(freeAddress(s, []), "198.18.1.2");
    assert.equal(freeAddress(s, ["198.18.1.2", "198.18.1.4"]), "198.18.1.3");
    assert.equal(
      freeAddress(s, ["198.18.1.2", "198.18.1.3", "198.18.1.4", "198.18.1.5", "198.18.1.6"]),
      undefined,
    );
  });

  it("gives a service one MAC address for all its instances, in LXD's range", () => {
    const id = "2f1c0d6e-8a4b-4a3e-9a53-0c1d2e3f4a5b";
    assert.equal(macOf(id), macOf(id));
    assert.match(macOf(id), /^00:16:3e:[0-7][0-9a-f](:[0-9a-f]{2}){2}$/);
    assert.notEqual(macOf(id), macOf("7c9e6679-7425-40de-944b-e07fc1f90ae7"));
  });

  it("writes the machine's static address and apt's proxy", () => {
    const [ifaces, apt] = guestFiles(
      { bridge: "hbn0", subnet: "198.18.1.0/26", gateway: "198.18.1.1", address: "198.18.1.9" },
      "http://198.18.0.1:3142",
    );
    assert.match(
      ifaces.content,
      /iface eth0 inet static\n {4}address 198\.18\.1\.9\n {4}netmask 255\.255\.255\.192\n {4}gateway 198\.18\.1\.1\n/,
    );
    assert.match(apt.content, /Acquire::http::Proxy "http:\/\/198\.18\.0\.1:3142";/);
  });

  it("never gives two customers overlapping subnets, nor one outside the pool or in the host's /24", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("198.18.0.0/15", "198.18.0.0/16", "198.19.128.0/17", "198.18.0.0/23"),
        fc.integer({ min: 24, max: 29 }),
        fc.nat(),
        fc.nat(),
        (cidr, prefix, i, j) => {
          const pool = parsePool(cidr);
          const n = subnetCount(pool, prefix);
          fc.pre(n > 1);
          const [a, b] = [subnetAt(pool, prefix, i % n), subnetAt(pool, prefix, j % n)];
          const size = 2 ** (32 - prefix);
          const start = (s: typeof a) => toInt(s.subnet.split("/")[0]);
          assert.ok(start(a) >= pool.base + 256, "outside the host's /24");
          assert.ok(start(a) + size <= pool.base + 2 ** (32 - pool.bits), "inside the pool");
          assert.equal(start(a) % size, 0, "aligned to its size");
          if (i % n !== j % n) {
            assert.ok(start(a) + size <= start(b) || start(b) + size <= start(a), "disjoint");
            assert.notEqual(a.bridge, b.bridge);
          }
          assert.ok(a.hosts.first > toInt(a.gateway) && a.hosts.last < start(a) + size - 1);
        },
      ),
    );
  });
});
