import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { PowerAction, PowerActionResultSchema } from "@hb/contracts/hb/compute/v1/actions_pb";
import {
  DispatchActionResponseSchema,
  GetProvisionStatusResponseSchema,
  ResetPasswordResponseSchema,
} from "@hb/contracts/hb/compute/v1/compute_pb";
import { JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import {
  InstanceState,
  MachineKind,
  MachineSummarySchema,
  PowerState,
  PowerStatusSchema,
  TrafficSchema,
} from "@hb/contracts/hb/compute/v1/machines_pb";
import { dedicatedDetail, powerStatus, provisionStatus, traffic, vpsRecord } from "../wire/machine.ts";
import { dispatchResult, passwordResult, powerResult } from "../wire/machine-action.ts";
import { serviceSummary, serviceSummaryExample } from "../wire/service.ts";
import { instanceStates, powerActions } from "./compute-wire.ts";
import { dedicatedDetailJson, vpsRecordJson } from "./machine.ts";
import { dispatchResultJson, passwordResultJson, powerResultJson } from "./machine-action.ts";
import { trafficJson } from "./machine-stats.ts";
import { powerStatusJson, provisionStatusJson } from "./machine-status.ts";

const service = serviceSummary.parse(serviceSummaryExample);
const machine = create(MachineSummarySchema, {
  serviceId: service.id,
  kind: MachineKind.VPS,
  provider: "simulator",
  hostname: "web-1.example.com",
  location: "fra1",
  ipAddresses: {
    addresses: [{ address: "203.0.113.9", version: 4, prefixLength: 24, purpose: 1 }],
    primaryIp: "203.0.113.9",
  },
  instance: { state: InstanceState.CREATING, vcpus: 1, memoryMb: 1024, diskGb: 20, osImageId: "debian-12" },
  capabilities: { power: true, snapshots: true },
});

describe("compute enums on the wire", () => {
  it("maps every instance state both ways and refuses a value the gateway does not know", () => {
    for (const name of ["creating", "running", "stopped", "paused", "error"] as const)
      assert.equal(instanceStates.name(instanceStates.value(name)), name);
    assert.throws(() => instanceStates.name(InstanceState.UNSPECIFIED), /instance state 0/);
    assert.throws(() => instanceStates.name(99), /instance state 99/);
  });

  it("reads a power action's name, and nothing it does not define (not even Object's own keys)", () => {
    assert.equal(powerActions.parse("poweroff"), PowerAction.POWEROFF);
    assert.equal(powerActions.parse("explode"), undefined);
    assert.equal(powerActions.parse("toString"), undefined);
  });
});

describe("machine records", () => {
  it("joins billing's service with compute's machine in the VPS record's shape", () => {
    const record = vpsRecordJson(service, machine);
    assert.deepEqual(vpsRecord.parse(record), record);
    assert.equal(record.instance?.state, "creating");
    assert.equal(record.primary_ip, "203.0.113.9");
    assert.deepEqual(record.ip_addresses[0], {
      address: "203.0.113.9",
      version: 4,
      prefix_length: 24,
      purpose: "primary",
    });
  });

  it("shows a service without a machine with its billing status folded, no instance and no control", () => {
    const record = dedicatedDetailJson({ ...service, status: "installing" }, undefined);
    assert.deepEqual(dedicatedDetail.parse(record), record);
    assert.equal(record.status, "pending");
    assert.equal("instance" in record, false);
    assert.equal(record.primary_ip, "");
    assert.equal(record.provider, "", "no machine, no provider: never a guessed one");
    assert.equal(Object.values(record.capabilities).includes(true), false);
  });
});

describe("action results", () => {
  const jobId = "0193a5d4-2f6e-7b1a-8c3d-4e5f6a7b8c9d";

  it("is completed with the state reached when compute reports one, pending otherwise", () => {
    const done = powerResultJson(
      create(PowerActionResultSchema, { jobId, reachedState: InstanceState.STOPPED }),
    );
    assert.deepEqual(done, { completed: true, job_id: jobId, state: "stopped", status: "succeeded" });
    const pending = powerResultJson(create(PowerActionResultSchema, { jobId }));
    assert.deepEqual(pending, { completed: false, job_id: jobId, pending: true });
    for (const r of [done, pending]) powerResult.parse(r);
  });

  it("answers the dispatcher's status read with the state twice", () => {
    const r = dispatchResultJson(
      create(DispatchActionResponseSchema, { result: { case: "state", value: InstanceState.RUNNING } }),
    );
    assert.deepEqual(r, { completed: true, state: "running", status: "running" });
    dispatchResult.parse(r);
  });

  it("shows a generated password only when compute made one", () => {
    const plain = passwordResultJson(create(ResetPasswordResponseSchema, { jobId }));
    assert.equal("password" in plain, false);
    const rebuilt = passwordResultJson(
      create(ResetPasswordResponseSchema, { jobId, generatedPassword: "x" }),
    );
    assert.equal(rebuilt.password, "x");
    for (const r of [plain, rebuilt]) passwordResult.parse(r);
  });
});

describe("machine status", () => {
  it("says absent for a machine without an instance", () => {
    const r = powerStatusJson(create(PowerStatusSchema, { power: PowerState.OFF }));
    assert.deepEqual(r, { state: "absent", power: "off" });
    powerStatus.parse(r);
  });

  it("writes the traffic's month as YYYY-MM from its first day", () => {
    const r = trafficJson(
      create(TrafficSchema, {
        periodStart: timestampFromDate(new Date("2026-11-01T00:00:00Z")),
        network: { rxBytes: 5n, txBytes: 7n },
      }),
    );
    assert.deepEqual(r, { period: "2026-11", rx_bytes: 5, tx_bytes: 7 });
    traffic.parse(r);
  });

  it("shows the latest build or reinstall job, and refuses any other as the provisioning job", () => {
    const job = (action: string) =>
      create(GetProvisionStatusResponseSchema, {
        state: InstanceState.CREATING,
        job: { action, status: JobStatus.RUNNING, progress: 40 },
      });
    const r = provisionStatusJson(job("reinstall"));
    assert.deepEqual(r, { state: "creating", job: { action: "reinstall", status: "running", progress: 40 } });
    provisionStatus.parse(r);
    assert.throws(() => provisionStatusJson(job("reboot")), /reboot job/);
    assert.equal(
      provisionStatusJson(create(GetProvisionStatusResponseSchema, { state: InstanceState.RUNNING })).job,
      null,
    );
  });
});
