import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AdminCreateMachineRequestSchema,
  ProvisionRequestSchema,
} from "@hb/contracts/hb/compute/v1/compute_pb";
import type { JobRow } from "./driver.ts";
import type { MachineRow } from "./machines.ts";
import { BUILD_FAILED, CONTROLLER_FAILED, createSimulatorDriver } from "./simulator.ts";

const sim = createSimulatorDriver({ buildMs: 300, actionMs: 200, reinstallMs: 500, failureInjection: true });
const job = (action: string, target_state = "running", copy_id: string | null = null): JobRow => ({
  id: "j",
  service_id: "0190a5f4-0000-7000-8000-000000000001",
  customer_id: "c",
  action,
  target_state,
  copy_id,
  claim: "k",
});
const machine = (driver_state: Record<string, unknown> = {}) =>
  ({ service_id: job("x").service_id, kind: "dedicated", provider: "simulator", driver_state }) as MachineRow;

describe("simulator driver", () => {
  it("fails the build of a machine ordered with 'fail' as a word of its hostname", () => {
    const state = (hostname: string) => sim.initialState(create(ProvisionRequestSchema, { hostname }));
    for (const h of ["fail-over-1", "web-fail-1", "db.fail", "fail"])
      assert.equal(state(h).fail_build, true, h);
    for (const h of ["failover", "web-1", "unfailing"]) assert.equal(state(h).fail_build, false, h);
  });

  it("builds every hostname when failure injection is off (its default: npm start, production)", () => {
    const plain = createSimulatorDriver({ buildMs: 300, actionMs: 200, reinstallMs: 500 });
    for (const h of ["fail-over-1", "web-fail-1", "db.fail", "fail"])
      assert.equal(plain.initialState(create(ProvisionRequestSchema, { hostname: h })).fail_build, false, h);
  });

  it("takes the admin command's failure flags as given, whatever the hostname", () => {
    const state = sim.initialState(
      create(AdminCreateMachineRequestSchema, {
        hostname: "fail-1",
        failBuild: false,
        controllerFails: true,
      }),
    );
    assert.deepEqual(state, { fail_build: false, controller_fails: true });
  });

  it("builds and rebuilds to running with addresses, or fails and destroys the instance when flagged", async () => {
    for (const action of ["build", "reinstall"]) {
      const built = await sim.run(job(action), machine());
      assert.ok(built?.ok && built.built && built.state === "running" && built.addresses?.length, action);
      assert.deepEqual(await sim.run(job(action), machine({ fail_build: true })), BUILD_FAILED);
    }
    assert.equal(BUILD_FAILED.ok || BUILD_FAILED.destroyed, true);
  });

  it("moves power actions to their target state and leaves the state alone on a password reset", async () => {
    assert.deepEqual(await sim.run(job("stop", "stopped"), machine({ fail_build: true })), {
      ok: true,
      state: "stopped",
    });
    assert.deepEqual(await sim.run(job("password", "running"), machine()), { ok: true });
  });

  it("refuses power actions at once when the controller fails, and nothing else", async () => {
    const broken = machine({ controller_fails: true });
    assert.deepEqual(await sim.start(job("restart"), broken), CONTROLLER_FAILED);
    assert.equal(await sim.start(job("restart"), machine()), undefined);
    assert.equal(await sim.start(job("reinstall"), broken), undefined);
    assert.equal(await sim.start(job("backup_create", "running", "copy"), broken), undefined);
  });

  it("completes an action in the call that asked for it when its duration is zero", async () => {
    const instant = createSimulatorDriver({ buildMs: 300, actionMs: 0, reinstallMs: 500 });
    assert.deepEqual(await instant.start(job("stop", "stopped"), machine()), { ok: true, state: "stopped" });
    assert.equal(await instant.start(job("build"), machine()), undefined);
  });

  it("waits the configured time before the first check of each kind of job", () => {
    assert.equal(sim.firstCheckMs("build"), 300);
    assert.equal(sim.firstCheckMs("reinstall"), 500);
    assert.equal(sim.firstCheckMs("snapshot_revert"), 500);
    assert.equal(sim.firstCheckMs("reboot"), 200);
  });
});
