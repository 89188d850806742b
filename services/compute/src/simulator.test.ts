import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MachineRow } from "./machines.ts";
import { BUILD_FAILED, type JobRow, simulatorDriver } from "./simulator.ts";

const job = (action: string, target_state = "running"): JobRow => ({
  id: "j",
  service_id: "s",
  action,
  target_state,
  copy_id: null,
});
const machine = (fail_build = false) => ({ fail_build, provider: "simulator" }) as MachineRow;

describe("simulator driver", () => {
  it("builds and rebuilds to running, or fails and destroys the instance when the machine is flagged", async () => {
    for (const action of ["build", "reinstall"]) {
      assert.deepEqual(await simulatorDriver.run(job(action), machine()), {
        ok: true,
        state: "running",
        built: true,
      });
      assert.deepEqual(await simulatorDriver.run(job(action), machine(true)), BUILD_FAILED);
    }
    assert.equal(BUILD_FAILED.ok || BUILD_FAILED.destroyed, true);
  });

  it("moves power actions to their target state and leaves the state alone on a password reset", async () => {
    assert.deepEqual(await simulatorDriver.run(job("stop", "stopped"), machine(true)), {
      ok: true,
      state: "stopped",
    });
    assert.deepEqual(await simulatorDriver.run(job("password", "running"), machine()), { ok: true });
  });
});
