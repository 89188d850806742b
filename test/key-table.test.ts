import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { freePort } from "../scripts/stack.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { gatewayCertEnv } from "./support/clients.ts";
import { eventually, untilAnswersOk } from "./support/eventually.ts";

const root = path.resolve(import.meta.dirname, "..");

/**
 * A TCP relay in front of auth whose connections can be cut (and refused) at will. What auth
 * sends arrives `delayMs` late (in order), as over a slow link: a change that returned before
 * this replica applied it would show.
 */
async function cuttableRelay(target: string, delayMs: number) {
  const [host, port] = target.includes(":") ? target.split(":") : ["127.0.0.1", target];
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) return client.destroy();
    const upstream = net.connect(Number(port), host || "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      setTimeout(() => {
        if (!client.destroyed) client.write(chunk);
      }, delayMs);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  const listenPort = await freePort();
  await new Promise<void>((r) => server.listen(listenPort, "127.0.0.1", r));
  return {
    address: `127.0.0.1:${listenPort}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    heal() {
      open = true;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe("the gateway's key table across two replicas", () => {
  let s: OwnStack;
  let relay: Awaited<ReturnType<typeof cuttableRelay>>;
  let second: ChildProcess | undefined;
  let secondLog = "";
  let replicas: string[] = [];
  let ownerId = "";
  let customerId = "";

  /** Until the replica's key table is in step with auth again (its readiness says so). */
  const inStep = (base: string, stepMs = 50) => untilAnswersOk(`${base}/readyz`, 60_000, stepMs);
  const get = async (base: string, key: string, p = "/api/v1/") => {
    const res = await fetch(base + p, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as { code?: string } };
  };
  /** A new key, once both replicas serve it. */
  const newKey = async (personId = ownerId, scopes = ["services"]) => {
    const { secretKey } = await s.auth.createKey({ personId, label: "k", scopes, ipAllowlist: "" });
    await eventually(
      async () => (await Promise.all(replicas.map((b) => get(b, secretKey)))).every((r) => r.status !== 401),
      30_000,
      20,
    );
    return secretKey;
  };

  /** Requests from 8 concurrent loops over both replicas, until stopped: the table is busy. */
  function load(key: string) {
    let stop = false;
    const seen: number[] = [];
    const loops = Array.from({ length: 8 }, async (_, i) => {
      while (!stop) {
        const r = await fetch(`${replicas[i % 2]}/api/v1/`, { headers: { authorization: `Bearer ${key}` } });
        await r.arrayBuffer();
        seen.push(r.status);
      }
    });
    return {
      seen,
      stop: async () => {
        stop = true;
        await Promise.all(loops);
      },
    };
  }

  before(async () => {
    // Short leases so a cut replica is waited out quickly; heartbeats well inside them.
    s = await ownStack("keytable", {
      KEY_LEASE_MS: "4000",
      KEY_HEARTBEAT_MS: "300",
      KEY_ACK_WAIT_MS: "1500",
    });
    relay = await cuttableRelay(s.stack.env.AUTH_ADDR, 150);
    const port = await freePort();
    second = spawn(process.execPath, [path.join(root, "services/gateway/src/main.ts")], {
      env: {
        ...process.env,
        ...s.stack.env,
        ...gatewayCertEnv(s.stack.env.HB_CERTS_DIR),
        PORT: String(port),
        AUTH_ADDR: relay.address,
        LOG_LEVEL: "info",
        // Its snapshots come in messages of two keys (5,000 by default), as a large table's would.
        KEY_SNAPSHOT_CHUNK: "2",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (c: Buffer) => {
      secondLog += c.toString();
    };
    second.stdout?.on("data", keep);
    second.stderr?.on("data", keep);
    replicas = [s.stack.gatewayUrl, `http://127.0.0.1:${port}`];
    const { customer, owner } = await s.auth.createCustomer({
      name: "K",
      email: "k@example.test",
      currency: "EUR",
    });
    ownerId = owner!.id;
    customerId = customer!.id;
    await inStep(replicas[1], 100).catch((err: unknown) =>
      assert.fail(`second replica never became ready: ${String(err)}\n${secondLog}`),
    );
  });

  after(async () => {
    second?.kill("SIGKILL");
    await relay?.close();
    await s?.close();
  });

  it("a key revoked under load is refused on the very next request on both replicas", async () => {
    const key = await newKey();
    const { keys } = await s.auth.listKeys({ personId: ownerId });
    for (const base of replicas) assert.equal((await get(base, key)).status, 200);
    const traffic = load(key);
    await eventually(async () => traffic.seen.length > 50, 30_000, 20);
    await s.auth.revokeKey({ personId: ownerId, keyId: keys[0].id });
    const next = await Promise.all(replicas.map((b) => get(b, key)));
    const during = traffic.seen.length;
    await traffic.stop();
    assert.deepEqual(
      next.map((r) => [r.status, r.body.code]),
      [
        [401, "UNAUTHORIZED"],
        [401, "UNAUTHORIZED"],
      ],
    );
    // Requests sent after the revocation returned were refused too (only ones in flight may pass).
    const late = traffic.seen.slice(during + 8);
    assert.ok(
      late.every((st) => st === 401),
      `late answers: ${late.join(",")}`,
    );
  });

  it("a suspension and a permission change act on the very next request on both replicas", async () => {
    const key = await newKey();
    const { person } = await s.auth.createPerson({
      customerId,
      name: "Member",
      email: `m${Date.now()}@example.test`,
      permissions: ["manage_services", "view_services"],
    });
    const memberKey = await newKey(person!.id, ["services"]);
    const write = (base: string) =>
      fetch(`${base}/api/v1/ssh-keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: "{}",
      }).then(async (r) => [r.status, ((await r.json()) as { code: string }).code]);
    for (const base of replicas) {
      assert.deepEqual(await write(base), [400, "BAD_REQUEST"]);
      assert.equal((await get(base, memberKey, "/api/v1/services")).status, 200);
    }
    const traffic = load(key);
    await s.auth.setCustomerStatus({ customerId, status: CustomerStatus.SUSPENDED });
    await s.auth.setPermissions({ personId: person!.id, permissions: [] });
    const writes = await Promise.all(replicas.map(write));
    const reads = await Promise.all(replicas.map((b) => get(b, memberKey, "/api/v1/services")));
    await traffic.stop();
    await s.auth.setCustomerStatus({ customerId, status: CustomerStatus.ACTIVE });
    assert.deepEqual(writes, [
      [403, "ACCOUNT_SUSPENDED"],
      [403, "ACCOUNT_SUSPENDED"],
    ]);
    assert.deepEqual(
      reads.map((r) => [r.status, r.body.code]),
      [
        [403, "FORBIDDEN"],
        [403, "FORBIDDEN"],
      ],
    );
  });

  it("switching the Customer API off acts on the very next request on both replicas", async () => {
    const key = await newKey();
    for (const base of replicas) assert.equal((await get(base, key)).status, 200);
    const traffic = load(key);
    await s.auth.updateSettings({ customerApiEnabled: false });
    try {
      const next = await Promise.all(replicas.map((b) => get(b, key)));
      await traffic.stop();
      assert.deepEqual(
        next.map((r) => [r.status, r.body.code]),
        [
          [403, "FEATURE_DISABLED"],
          [403, "FEATURE_DISABLED"],
        ],
      );
    } finally {
      await traffic.stop();
      await s.auth.updateSettings({ customerApiEnabled: true });
    }
    for (const base of replicas) assert.equal((await get(base, key)).status, 200);
  });

  it("a replica cut off from auth answers keyed requests 503 until it has resynced", async () => {
    const key = await newKey();
    const doomed = await newKey();
    const { keys } = await s.auth.listKeys({ personId: ownerId });
    const doomedId = keys.find((k) => doomed.includes(`_${k.prefix}_`))!.id;
    for (const base of replicas) {
      assert.equal((await get(base, key)).status, 200);
      assert.equal((await get(base, doomed)).status, 200);
    }
    relay.cut();
    await eventually(async () => (await get(replicas[1], key)).status === 503, 30_000, 20);
    const refused = await get(replicas[1], key);
    assert.deepEqual([refused.status, refused.body.code], [503, "SERVICE_UNAVAILABLE"]);
    assert.equal((await get(replicas[0], key)).status, 200, "the other replica serves on");
    // A change while the replica is cut off still returns (the replica is waited out) ...
    await s.auth.revokeKey({ personId: ownerId, keyId: doomedId });
    assert.equal((await get(replicas[0], doomed)).status, 401);
    assert.equal((await get(replicas[1], doomed)).status, 503);
    // ... and is in the table the replica gets when it resyncs.
    relay.heal();
    await inStep(replicas[1]);
    assert.equal((await get(replicas[1], key)).status, 200);
    assert.equal((await get(replicas[1], doomed)).status, 401);
  });

  it("a replica resyncs from a snapshot sent in several messages and serves every key in it", async () => {
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) keys.push(await newKey());
    relay.cut();
    await eventually(async () => (await get(replicas[1], keys[0])).status === 503, 30_000, 20);
    const logged = secondLog.length;
    relay.heal();
    // A 200 alone could be auth's answer (a replica out of step asks auth.Verify): wait for the table.
    await inStep(replicas[1]);
    for (const key of keys) assert.equal((await get(replicas[1], key)).status, 200);
    const synced = secondLog
      .slice(logged)
      .split("\n")
      .filter((l) => l.includes("key table synced"))
      .map((l) => JSON.parse(l) as { keys: number; messages: number });
    const last = synced.at(-1);
    assert.ok(last, `no resync logged:\n${secondLog.slice(logged)}`);
    assert.ok(last.keys >= keys.length);
    assert.equal(last.messages, Math.ceil(last.keys / 2), "two keys per message");
  });
});
