import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import { describe, it } from "node:test";
import { resolveError } from "@hb/platform";
import { checkWebhookUrl } from "./endpoint.ts";

// Names answer from this table instead of DNS; a name not in it does not resolve.
const zone: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "example.com": ["93.184.216.34"],
  "rebind.example": ["127.0.0.1"],
  "mixed.example": ["8.8.8.8", "10.0.0.1"],
  "v4compat.example": ["::7f00:1"],
  "nat64.example": ["64:ff9b::a9fe:a9fe"],
};
const resolve = async (host: string): Promise<LookupAddress[]> => {
  const addresses = zone[host];
  if (!addresses) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

const accepted = async (url: string, allowed: string[] = []) => {
  try {
    await checkWebhookUrl(url, new Set(allowed), resolve);
    return true;
  } catch (err) {
    const r = resolveError(err);
    assert.equal(r.code, "BAD_REQUEST", `${url}: ${r.message}`);
    assert.equal(r.info?.violations[0]?.field, "url", url);
    return false;
  }
};

describe("webhook URL check when saved", () => {
  it("refuses every spelling of a loopback, private or local destination", async () => {
    for (const url of [
      "http://127.0.0.1/",
      "http://[::1]/",
      "http://[::7f00:1]:8080/",
      "http://[::127.0.0.1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[0:0:0:0:0:ffff:7f00:1]/",
      "http://[::ffff:0:7f00:1]/",
      "http://[64:ff9b::7f00:1]/",
      "http://[64:ff9b:1::7f00:1]/",
      "http://[2002:7f00:1::1]/",
      "http://[2002:c0a8:101::1]/",
      "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
      "http://[fe80::1%25eth0]/",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://017700000001/",
      "http://0177.0.0.1/",
      "http://127.1/",
      "http://0/",
      "http://127.0.0.1./",
      "http://localhost/",
      "http://localhost./",
      "http://localhost../",
      "http://LOCALHOST:8080/",
      "http://LocalHost./",
      "http://localhost%2e/",
      "http://ｌｏｃａｌｈｏｓｔ/",
      "http://foo.localhost/",
      "http://foo.localhost./",
      "http://printer.local/",
      "http://db.internal/",
      "http://intranet/",
      "http://rebind.example/",
      "http://mixed.example/",
      "http://v4compat.example/",
      "http://nat64.example/",
    ]) {
      assert.equal(await accepted(url), false, url);
    }
  });

  // Another scheme (ftp://) is refused by SetWebhookUrlRequest's declared rule before this check.
  it("refuses a URL that is not absolute, and credentials", async () => {
    for (const url of ["example.com/hook", "https://user:pw@example.com/"]) {
      assert.equal(await accepted(url), false, url);
    }
  });

  it("accepts public destinations, and a name that does not resolve yet", async () => {
    for (const url of [
      "https://hooks.example.com/partner",
      "https://example.com./x",
      "http://8.8.8.8/",
      "http://[2606:4700:4700::1111]/",
      "http://[::ffff:8.8.8.8]/",
      "http://[64:ff9b::808:808]/",
      "https://not-yet.example/hook",
    ]) {
      assert.equal(await accepted(url), true, url);
    }
  });

  it("does not wait past its bound for a resolver that never answers: the name counts as not resolving yet", async () => {
    const silent = () => new Promise<LookupAddress[]>(() => {});
    const started = performance.now();
    assert.equal(
      await checkWebhookUrl("https://hooks.example.com/p", new Set(), silent, 50),
      "https://hooks.example.com/p",
    );
    assert.ok(performance.now() - started < 2_000);
  });

  it("accepts a destination on the allowed list only at its exact host and port", async () => {
    const allowed = ["127.0.0.1:4567", "[::1]:8443", "localhost:9000"];
    for (const url of [
      "http://127.0.0.1:4567/hook",
      "https://127.0.0.1:4567/hook",
      "http://127.0.0.1.:4567/",
      "http://2130706433:4567/",
      "https://[::1]:8443/",
      "http://localhost:9000/",
      "http://LOCALHOST.:9000/",
    ]) {
      assert.equal(await accepted(url, allowed), true, url);
    }
    for (const url of [
      "http://127.0.0.1:4568/",
      "http://127.0.0.1/",
      "http://127.0.0.2:4567/",
      "http://localhost:4567/",
      "http://[::1]:4567/",
      "http://[::ffff:127.0.0.1]:4567/",
      "http://[::7f00:1]:4567/",
      "https://[::1]/",
      "http://localhost:8443/",
      "http://foo.localhost:9000/",
    ]) {
      assert.equal(await accepted(url, allowed), false, url);
    }
  });
});
