import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { freePort, SERVICES } from "../scripts/stack.ts";
import { eventually, newAccount } from "./helpers.ts";
import { ownStack } from "./own-stack.ts";
import { gatewayCertEnv } from "./support/clients.ts";

const root = path.resolve(import.meta.dirname, "..");

function run(entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(root, entry)], {
    env: { ...process.env, ...(entry.includes("gateway") ? gatewayCertEnv() : {}), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    output += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, output: () => output };
}

describe("service start-up and shutdown", () => {
  it("refuses to start on a bad variable, naming it", async () => {
    const p = run("services/auth/src/main.ts", { HB_NS: "Not Valid!", LOG_LEVEL: "info" });
    assert.equal(await p.exited, 1);
    assert.match(p.output(), /HB_NS/);
    const q = run("services/gateway/src/main.ts", { PORT: "seventy", LOG_LEVEL: "info" });
    assert.equal(await q.exited, 1);
    assert.match(q.output(), /PORT/);
  });

  it("a gateway replica serves, then on SIGTERM stops accepting and exits cleanly", async (t) => {
    const acct = await newAccount();
    const port = await freePort();
    const p = run("services/gateway/src/main.ts", { PORT: String(port), LOG_LEVEL: "info" });
    // A failed assertion must not leave the replica running: the test file would never exit.
    t.after(() => {
      if (p.child.exitCode === null) p.child.kill("SIGKILL");
    });
    const url = `http://127.0.0.1:${port}/api/v1/`;
    // The body is read so the keep-alive connection is reused by the in-flight request below.
    await eventually(
      () =>
        fetch(url, { headers: { authorization: `Bearer ${acct.key}` } }).then(
          async (r) => (await r.text()) !== "" && r.status === 200,
          () => false,
        ),
      60_000,
      100,
    ).catch((err: unknown) =>
      assert.fail(`second gateway replica never answered: ${String(err)}\n${p.output()}`),
    );
    const inFlight = fetch(url, { headers: { authorization: `Bearer ${acct.key}` } });
    await new Promise((r) => setTimeout(r, 20)); // let it reach the server
    p.child.kill("SIGTERM");
    const done = await inFlight.catch((e: unknown) => {
      throw new Error(`in-flight failed: ${String(e)}\n${p.output()}`);
    });
    assert.equal(done.status, 200, "the in-flight request finished");
    assert.equal(await p.exited, 0);
    assert.match(p.output(), /shutting down/);
    await assert.rejects(fetch(url));
  });

  it("every backend exits 0 within 5 s of SIGTERM when idle, with a minute between delivery passes", async (t) => {
    // The default pass interval: a shutdown that waited for the next pass took up to a minute,
    // past Kubernetes' 30 s grace period.
    const s = await ownStack("stop", { WEBHOOK_PASS_INTERVAL_MS: "60000" });
    t.after(() => s.close());
    const exits = await Promise.all(
      SERVICES.map(async ({ name }) => {
        const proc = s.stack.procs.get(name)!;
        const started = Date.now();
        const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
        proc.kill("SIGTERM");
        const code = await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000, "still running"))]);
        return { name, code, ms: Date.now() - started };
      }),
    );
    for (const e of exits) assert.equal(e.code, 0, `${e.name}: ${e.code} after ${e.ms} ms`);
  });
});
