import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { destinationOf, parseDestination } from "./allowed-destinations.ts";

describe("allowed destinations", () => {
  it("names a URL's destination by its normalised host and its explicit or default port", () => {
    for (const [url, dest] of [
      ["http://127.0.0.1:4567/hook", "127.0.0.1:4567"],
      ["http://Example.COM./x", "example.com:80"],
      ["https://example.com/x", "example.com:443"],
      ["http://example.com:443/x", "example.com:443"],
      ["https://[::1]/", "[::1]:443"],
      ["http://[0:0::1]:8080/", "[::1]:8080"],
      ["http://2130706433:81/", "127.0.0.1:81"],
      ["http://localhost.:9000/", "localhost:9000"],
    ]) {
      assert.equal(destinationOf(new URL(url)), dest, url);
    }
  });

  it("normalises an operator's entry the way a URL normalises its host", () => {
    for (const [entry, dest] of [
      ["127.0.0.1:4567", "127.0.0.1:4567"],
      [" LOCALHOST.:80 ", "localhost:80"],
      ["[0:0::1]:443", "[::1]:443"],
      ["[::FFFF:127.0.0.1]:1", "[::ffff:7f00:1]:1"],
      ["2130706433:80", "127.0.0.1:80"],
      ["hooks.dev.example:8443", "hooks.dev.example:8443"],
    ]) {
      assert.equal(parseDestination(entry), dest, entry);
    }
  });

  it("refuses an entry that is not exactly a host and a port", () => {
    for (const entry of [
      "",
      "127.0.0.1",
      ":80",
      ".:80",
      "127.0.0.1:0",
      "127.0.0.1:65536",
      "::1:80",
      "http://x:80",
      "x:80/path",
      "user@x:80",
      "[zz]:80",
      "1.2.3.4.5:80",
    ]) {
      assert.equal(parseDestination(entry), undefined, entry);
    }
  });
});
