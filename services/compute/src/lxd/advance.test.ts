import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DriverState, JobRow } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { advance } from "./advance.ts";
import { type LxdClient, LxdError, type LxdOperation } from "./client.ts";
import { createLxdContext } from "./context.ts";
import type { Progress } from "./state.ts";

const BUSY = 'Failed to create instance delete operation: Instance is busy running a "stop" operation';

/**
 * A stopped instance whose delete operations LXD fails busy `refusals` times (its own stop after a
 * failed start still holds the instance), then deletes it.
 */
function fakeLxd(refusals: number) {
  const asked: string[] = [];
  let exists = true;
  // The job under test already waits on delete-1.
  let deletes = 1;
  const client: LxdClient = {
    endpoint: { name: "fake", url: "unix:///fake" } as LxdClient["endpoint"],
    async get<T>(path: string) {
      if (path.endsWith("/hb-svc")) {
        if (!exists) throw new LxdError("not found", 404);
        return { name: "hb-svc", status: "Stopped" } as T;
      }
      throw new Error(`unexpected GET ${path}`);
    },
    async submit(method, path) {
      asked.push(`${method} ${path}`);
      if (method === "DELETE") return `delete-${++deletes}`;
      return "other-op";
    },
    async send() {
      return "";
    },
    async operation(id) {
      asked.push(`op ${id}`);
      if (id.startsWith("delete-")) {
        if (Number(id.slice(7)) <= refusals) return { id, status: "Failure", err: BUSY } as LxdOperation;
        exists = false;
      }
      return { id, status: "Success", err: "" } as LxdOperation;
    },
    async download() {},
    async upload() {
      return "";
    },
  };
  return { client, asked };
}

/** The driver's context on one fake daemon; each progress it remembers is kept in `remembered`. */
function fakeContext(client: LxdClient) {
  const remembered: Progress[] = [];
  const d = createLxdContext({
    clients: [client],
    images: {},
    proxyAddress: "127.0.0.1",
    profiles: ["default"],
    backupDir: "/nonexistent",
    unreachableFailMs: 60_000,
    sshKeysOf: async () => [],
    allocatePort: async () => 2200,
    async remember(_job, progress: DriverState) {
      remembered.push({ ...(progress as Progress) });
    },
  });
  return { d, remembered };
}

function buildAtDelete(client: LxdClient) {
  const { d, remembered } = fakeContext(client);
  const m = { service_id: "svc", driver_state: {} } as unknown as MachineRow;
  // A build whose start failed went back to its stop and delete (startNew); its delete's operation
  // is the one the job waits on (step 2 of place, stop, delete, create, identity, start).
  const job = {
    id: "job",
    service_id: "svc",
    action: "build",
    driver_state: { step: 2, op: "delete-1", endpoint: "fake", transient_retries: 1 },
  } as unknown as JobRow;
  return { d, m, job, remembered };
}

describe("a build whose delete LXD fails because another operation holds the instance", () => {
  it("asks for the delete again at the next tick instead of failing the build", async () => {
    const lxd = fakeLxd(1);
    const { d, m, job, remembered } = buildAtDelete(lxd.client);
    assert.equal(await advance(d, job, m), undefined);
    const kept = remembered.at(-1);
    assert.equal(kept?.step, 2);
    assert.equal(kept?.op, undefined);
    assert.equal(typeof kept?.busy_since, "number");

    // The next tick deletes it and goes on to the create.
    job.driver_state = kept;
    await advance(d, job, m).catch(() => undefined);
    assert.ok(lxd.asked.includes("DELETE /1.0/instances/hb-svc"), lxd.asked.join("\n"));
  });

  it("keeps counting its patience across a delete that is refused again, and fails the build once it has passed", async () => {
    const lxd = fakeLxd(100);
    const { d, m, job, remembered } = buildAtDelete(lxd.client);
    assert.equal(await advance(d, job, m), undefined);
    const first = remembered.at(-1);
    assert.equal(typeof first?.busy_since, "number");

    // The delete is asked again: its operation is the one waited on, the patience's start kept.
    job.driver_state = first;
    assert.equal(await advance(d, job, m), undefined);
    const waiting = remembered.at(-1);
    assert.equal(waiting?.op, "delete-2");
    assert.equal(waiting?.busy_since, first?.busy_since);

    // Refused again, long after the first refusal: the build fails.
    job.driver_state = { ...waiting, busy_since: Date.now() - 10 * 60_000 };
    const outcome = await advance(d, job, m);
    assert.equal(outcome?.ok, false);
    assert.match((!outcome?.ok && outcome?.message) || "", /Instance is busy running/);
  });
});

const SHUTDOWN_FAILED =
  'Failed shutting down instance, status is "Running": shutting down the container failed';

/**
 * A running instance whose state changes (`op`: "restart" or "stop", the operations' ids) LXD
 * fails with SHUTDOWN_FAILED `failures` times; the next succeeds and leaves it `after`. `asked`
 * holds each request as sent, `states` each state change's action and force.
 */
function shuttingDownLxd(op: string, failures: number, after: string) {
  const asked: string[] = [];
  const states: { action: string; force: boolean }[] = [];
  let sent = 1;
  let status = "Running";
  const client: LxdClient = {
    endpoint: { name: "fake", url: "unix:///fake" } as LxdClient["endpoint"],
    async get<T>(path: string) {
      if (path.endsWith("/hb-svc")) return { name: "hb-svc", status } as T;
      throw new Error(`unexpected GET ${path}`);
    },
    async submit(method, path, body) {
      asked.push(`${method} ${path} ${JSON.stringify(body)}`);
      const { action, force } = body as { action: string; force?: boolean };
      states.push({ action, force: Boolean(force) });
      return `${op}-${++sent}`;
    },
    async send() {
      return "";
    },
    async operation(id) {
      if (Number(id.slice(op.length + 1)) <= failures)
        return { id, status: "Failure", err: SHUTDOWN_FAILED } as LxdOperation;
      status = after;
      return { id, status: "Success", err: "" } as LxdOperation;
    },
    async download() {},
    async upload() {
      return "";
    },
  };
  return { client, asked, states };
}

const restartingLxd = (failures: number) => shuttingDownLxd("restart", failures, "Running");
const stoppingLxd = (failures: number) => shuttingDownLxd("stop", failures, "Stopped");

/** A job `action` waiting on its first operation (`op`-1), asked for `askedMsAgo` ago. */
function jobWaiting(client: LxdClient, action: string, op: string, askedMsAgo: number, targetState?: string) {
  const { d, remembered } = fakeContext(client);
  const m = { service_id: "svc", driver_state: { endpoint: "fake" } } as unknown as MachineRow;
  const job = {
    id: "job",
    service_id: "svc",
    action,
    target_state: targetState,
    driver_state: { step: 0, op: `${op}-1`, op_at: Date.now() - askedMsAgo, endpoint: "fake" },
  } as unknown as JobRow;
  return { d, m, job, remembered };
}

/** A reboot waiting on the restart operation it asked for `askedMsAgo` ago. */
const rebootWaiting = (client: LxdClient, askedMsAgo: number) =>
  jobWaiting(client, "reboot", "restart", askedMsAgo);

/** A customer's `action` (stop or shutdown) waiting on the clean stop it asked for `askedMsAgo` ago. */
const stopWaiting = (client: LxdClient, action: string, askedMsAgo: number) =>
  jobWaiting(client, action, "stop", askedMsAgo, "stopped");

describe("a reboot whose clean shutdown LXD fails", () => {
  it("asks for the restart again when LXD gave up at once, and the reboot goes through", async () => {
    const lxd = restartingLxd(1);
    const { d, m, job, remembered } = rebootWaiting(lxd.client, 600);
    assert.equal(await advance(d, job, m), undefined);
    const kept = remembered.at(-1);
    assert.equal(kept?.op, undefined);
    assert.equal(kept?.step, 0);

    job.driver_state = kept;
    assert.equal(await advance(d, job, m), undefined);
    assert.equal(remembered.at(-1)?.op, "restart-2");
    assert.match(lxd.asked.join("\n"), /PUT \/1\.0\/instances\/hb-svc\/state .*"action":"restart"/);

    job.driver_state = remembered.at(-1);
    const outcome = await advance(d, job, m);
    assert.equal(outcome?.ok, true);
  });

  it("forces the restart when the shutdown failed at its timeout (the system would not stop)", async () => {
    const lxd = restartingLxd(1);
    const { d, m, job, remembered } = rebootWaiting(lxd.client, 31_000);
    assert.equal(await advance(d, job, m), undefined);
    assert.equal(lxd.asked.length, 1);
    assert.match(lxd.asked[0], /PUT \/1\.0\/instances\/hb-svc\/state .*"action":"restart".*"force":true/);
    assert.equal(remembered.at(-1)?.forced, true);

    job.driver_state = remembered.at(-1);
    const outcome = await advance(d, job, m);
    assert.equal(outcome?.ok, true);
  });

  it("fails the reboot when its forced restart fails too", async () => {
    const lxd = restartingLxd(2);
    const { d, m, job, remembered } = rebootWaiting(lxd.client, 31_000);
    assert.equal(await advance(d, job, m), undefined);
    job.driver_state = { ...remembered.at(-1), op_at: Date.now() - 31_000 };
    const outcome = await advance(d, job, m);
    assert.equal(outcome?.ok, false);
    assert.match((!outcome?.ok && outcome?.message) || "", /shutting down the container failed/);
  });
});

describe("a stop or shutdown the system ignores", () => {
  for (const action of ["stop", "shutdown"]) {
    it(`${action}: forces the stop once the clean one failed at its timeout, and the machine is stopped`, async () => {
      const lxd = stoppingLxd(1);
      const { d, m, job, remembered } = stopWaiting(lxd.client, action, 31_000);
      assert.equal(await advance(d, job, m), undefined);
      assert.deepEqual(lxd.states, [{ action: "stop", force: true }]);
      const kept = remembered.at(-1);
      assert.equal(kept?.op, "stop-2");
      assert.equal(kept?.forced, true);

      job.driver_state = kept;
      const outcome = await advance(d, job, m);
      assert.equal(outcome?.ok, true);
      assert.equal(outcome?.ok && outcome.state, "stopped");
    });
  }

  it("asks for the clean stop again, not a forced one, when LXD gave up at once", async () => {
    const lxd = stoppingLxd(1);
    const { d, m, job, remembered } = stopWaiting(lxd.client, "stop", 600);
    assert.equal(await advance(d, job, m), undefined);
    job.driver_state = remembered.at(-1);
    assert.equal(await advance(d, job, m), undefined);
    assert.deepEqual(lxd.states, [{ action: "stop", force: false }]);
  });

  it("fails a stop whose forced stop LXD fails too", async () => {
    const lxd = stoppingLxd(2);
    const { d, m, job, remembered } = stopWaiting(lxd.client, "stop", 31_000);
    assert.equal(await advance(d, job, m), undefined);
    job.driver_state = { ...remembered.at(-1), op_at: Date.now() - 31_000 };
    const outcome = await advance(d, job, m);
    assert.equal(outcome?.ok, false);
    assert.deepEqual(lxd.states, [{ action: "stop", force: true }]);
  });
});
