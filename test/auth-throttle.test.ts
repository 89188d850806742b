import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { generateKey } from "@hb/platform";
import { signResellerRequest } from "@hb/webhook-signature";
import { freePort } from "../scripts/stack.ts";
import { eventually, GATEWAY, newAccount, newPartner, untilAnswersOk } from "./helpers.ts";
import { gatewayCertEnv } from "./support/clients.ts";

const root = path.resolve(import.meta.dirname, "..");

// The shared gateway lets every test file fail keys at will (scripts/test.ts); this file runs a
// gateway replica of its own on the same backends and Redis, with a small allowance: 3 failures,
// then each refusal held DELAY_MS, counted over a 4 s window.
const FREE = 3;
const DELAY_MS = 2500;
const WINDOW_S = 4;

interface Timed {
  status: number;
  code?: string;
  ms: number;
}

/** A GET from the given loopback source address (all of 127/8 is this machine), timed. */
function get(base: string, apiPath: string, from: string, headers: Record<string, string>): Promise<Timed> {
  const url = new URL(`/api/v1${apiPath}`, base);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "GET", headers, localAddress: from, agent: false }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => {
        text += c.toString();
      });
      res.on("end", () => {
        const body = JSON.parse(text) as { code?: string };
        resolve({ status: res.statusCode ?? 0, code: body.code, ms: performance.now() - started });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe("failed authentication is slowed per source address", () => {
  let gateway = "";
  let child: ReturnType<typeof spawn> | undefined;
  let output = "";
  // A fresh source address per test, so their counters never meet.
  let lastOctet = 10 + (process.pid % 100);
  const nextAddress = () => `127.0.${(lastOctet++ % 250) + 1}.${(process.pid % 250) + 2}`;

  before(async () => {
    const port = await freePort();
    child = spawn(process.execPath, [path.join(root, "services/gateway/src/main.ts")], {
      env: {
        ...process.env,
        ...gatewayCertEnv(),
        PORT: String(port),
        GATEWAY_METRICS_PORT: String(await freePort()),
        AUTH_FAILURES_FREE: String(FREE),
        AUTH_FAILURE_WINDOW_S: String(WINDOW_S),
        AUTH_FAILURE_DELAY_MS: String(DELAY_MS),
        AUTH_FAILURE_MAX_DELAY_MS: String(DELAY_MS),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (c: Buffer) => {
      output += c.toString();
    });
    child.stderr?.on("data", (c: Buffer) => {
      output += c.toString();
    });
    gateway = `http://127.0.0.1:${port}`;
    await untilAnswersOk(`${gateway}/healthz`, 90_000).catch((err: unknown) =>
      assert.fail(`gateway replica never answered: ${String(err)}\n${output}`),
    );
  });
  after(() => {
    if (child?.exitCode === null) child.kill("SIGKILL");
  });

  it("after 3 failures of any kind the next refusal is held; a valid key from that address is served at once, another address is not held", async () => {
    const acct = await newAccount();
    const partner = await newPartner();
    const from = nextAddress();
    const other = nextAddress();
    // One of each kind: a malformed key, an unknown key, a reseller request with a bad signature.
    const badSignature = {
      ...bearer(partner.key),
      ...signResellerRequest({ body: "", secret: `${partner.secret}x` }),
    };
    const failures = [
      await get(gateway, "/", from, bearer("nonsense")),
      await get(gateway, "/", from, bearer(generateKey().full)),
      await get(gateway, "/reseller/services", from, badSignature),
    ];
    assert.deepEqual(
      failures.map((f) => [f.status, f.code]),
      Array(3).fill([401, "UNAUTHORIZED"]),
    );

    const held = await get(gateway, "/", from, bearer(generateKey().full));
    assert.deepEqual([held.status, held.code], [401, "UNAUTHORIZED"], "still the spec's 401, only later");
    assert.ok(held.ms >= DELAY_MS - 50, `the 4th failure was answered after ${Math.round(held.ms)} ms`);

    // Never a lock-out: the valid key from the same address is answered without the delay.
    const valid = await get(gateway, "/", from, bearer(acct.key));
    assert.equal(valid.status, 200);
    assert.ok(valid.ms < DELAY_MS, `a valid key waited ${Math.round(valid.ms)} ms`);
    const signedOk = await get(gateway, "/reseller/services", from, {
      ...bearer(partner.key),
      ...signResellerRequest({ body: "", secret: partner.secret }),
    });
    assert.equal(signedOk.status, 200, "a correctly signed reseller request is served");

    const elsewhere = await get(gateway, "/", other, bearer("nonsense"));
    assert.equal(elsewhere.status, 401);
    assert.ok(elsewhere.ms < DELAY_MS, `another address waited ${Math.round(elsewhere.ms)} ms`);
  });

  it("counts failures across gateway replicas (the count is in Redis) and a missing header not at all", async () => {
    const from = nextAddress();
    const shared = new URL(GATEWAY);
    for (let i = 0; i < 5; i++) {
      const r = await get(shared.origin, "/", from, {});
      assert.equal(r.status, 401, "missing header");
    }
    for (let i = 0; i < FREE; i++) {
      assert.equal((await get(shared.origin, "/", from, bearer("nonsense"))).status, 401);
    }
    const held = await get(gateway, "/", from, bearer("nonsense"));
    assert.equal(held.status, 401);
    assert.ok(held.ms >= DELAY_MS - 50, `answered after ${Math.round(held.ms)} ms`);
  });

  it("the count expires with its window", async () => {
    const from = nextAddress();
    for (let i = 0; i <= FREE; i++) await get(gateway, "/", from, bearer("nonsense"));
    const held = await get(gateway, "/", from, bearer("nonsense"));
    assert.ok(held.ms >= DELAY_MS - 50, `answered after ${Math.round(held.ms)} ms`);
    // Once the window (started by the first failure) is over, a failure is answered at once again.
    await eventually(
      async () => (await get(gateway, "/", from, bearer("nonsense"))).ms < DELAY_MS - 50,
      60_000,
      200,
    );
  });
});
