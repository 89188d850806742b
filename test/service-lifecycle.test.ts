import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { describe, it } from "node:test";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import postgres from "postgres";
import { freePort, SERVICES } from "../scripts/stack.ts";
import { eventually, newAccount } from "./helpers.ts";
import { ownStack } from "./own-stack.ts";
import { gatewayCertEnv } from "./support/clients.ts";
import { testDatabaseUrl, testNamespace } from "./support/test-database.ts";

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
    // The in-flight request: its headers go first with Expect: 100-continue, and the server's
    // "100 Continue" is the sign that it holds the request; only then does SIGTERM go out, and the
    // body after it. The request must still be answered in full.
    const body = JSON.stringify({ name: "in flight", publicKey: "not a key" });
    const socket = net.connect(port, "127.0.0.1");
    let answer = "";
    socket.on("data", (d: Buffer) => {
      answer += d.toString();
    });
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.write(
      `POST /api/v1/ssh-keys HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${acct.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        "Expect: 100-continue\r\nConnection: close\r\n\r\n",
    );
    await eventually(async () => answer.startsWith("HTTP/1.1 100 Continue"), 30_000, 10);
    p.child.kill("SIGTERM");
    socket.write(body);
    await closed;
    const final = answer.slice(answer.indexOf("\r\n\r\n") + 4);
    assert.match(
      final,
      /^HTTP\/1\.1 400 /,
      `the in-flight request was answered in full:\n${answer}\n${p.output()}`,
    );
    assert.match(final, /"code":"BAD_REQUEST"/);
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

  it("a private stack that fails to start leaves no database or stream behind", async () => {
    const ns = testNamespace();
    // The backends start (database migrated, streams made), then the gateway refuses its settings.
    await assert.rejects(ownStack("failstart", { HB_NS: ns, STREAM_HEARTBEAT_MS: "1" }), /gateway exited/);
    const admin = postgres(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", {
      max: 1,
      onnotice: () => {},
    });
    const prefix = testDatabaseUrl("failstart").pathname.slice(1, -8);
    const left =
      await admin`select datname from pg_database where left(datname, ${prefix.length}) = ${prefix}`;
    await admin.end();
    assert.deepEqual(
      left.map((r) => r.datname),
      [],
    );
    const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    const jsm = await jetstreamManager(nc);
    const names = [];
    for await (const info of jsm.streams.list()) names.push(info.config.name);
    await nc.close();
    assert.deepEqual(
      names.filter((n) => n.startsWith(ns.toUpperCase())),
      [],
    );
  });
});
