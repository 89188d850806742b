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

function buildAtDelete(client: LxdClient) {
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
