import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InstanceState, MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { instanceStates, kindFilter, machineKinds } from "./enums.ts";
import { actionNames, dispatchedPowerAction } from "./power.ts";

describe("stored names and contract enums", () => {
  it("maps each stored state to its enum and back, an unknown one to UNSPECIFIED", () => {
    for (const name of ["creating", "running", "stopped", "paused", "error"])
      assert.equal(instanceStates.name(instanceStates.of(name)), name);
    assert.equal(instanceStates.of("exploded"), InstanceState.UNSPECIFIED);
    assert.equal(instanceStates.name(InstanceState.UNSPECIFIED), undefined);
    assert.equal(machineKinds.of("game"), MachineKind.GAME);
  });

  it("reads an unspecified kind as any kind (the contract refuses a kind it does not define)", () => {
    assert.equal(kindFilter(MachineKind.UNSPECIFIED), "");
    assert.equal(kindFilter(MachineKind.DEDICATED), "dedicated");
  });
});

describe("action names", () => {
  it("lists the dispatcher's actions, then the kind's power actions, once each", () => {
    assert.deepEqual(actionNames("dedicated"), ["start", "stop", "restart", "status", "stats", "on", "off"]);
    assert.deepEqual(actionNames("game"), ["start", "stop", "restart", "status", "stats", "kill"]);
  });

  it("dispatches start and stop to a dedicated server as on and off", () => {
    assert.equal(dispatchedPowerAction("dedicated", "start"), "on");
    assert.equal(dispatchedPowerAction("dedicated", "restart"), "restart");
    assert.equal(dispatchedPowerAction("vps", "start"), "start");
  });
});
