import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConnectError } from "@connectrpc/connect";
import { InstanceState, IpAddressPurpose, MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { ErrorInfoSchema } from "@hb/contracts/hb/platform/v1/error_pb";
import {
  addressesFor,
  assertControllable,
  capabilitiesOf,
  type MachineRow,
  machineSummary,
} from "./machines.ts";

const machine = (over: Partial<MachineRow> = {}): MachineRow => ({
  service_id: "0190a5f4-0000-7000-8000-000000000001",
  customer_id: "0190a5f4-0000-7000-8000-000000000002",
  kind: "vps",
  provider: "simulator",
  hostname: "h",
  location: "fra1",
  state: "running",
  has_instance: true,
  vcpus: 1,
  memory_mb: 1024,
  disk_gb: 20,
  os: "debian-12",
  rescue_mode: false,
  os_images: ["debian-12"],
  disabled_controls: [],
  driver_state: {},
  ssh_port: null,
  ssh_password_login: false,
  service_status: "active",
  created_at: new Date(0),
  ...over,
});

/** The spec code carried by the error assertControllable throws ("" when it passes). */
function refusal(m: MachineRow, control: Parameters<typeof assertControllable>[1] = "power"): string {
  try {
    assertControllable(m, control);
    return "";
  } catch (err) {
    assert.ok(err instanceof ConnectError);
    return err.findDetails(ErrorInfoSchema)[0]?.code ?? "";
  }
}

describe("capabilities", () => {
  it("switches off the plan's disabled controls; snapshots exist on VPS only", () => {
    assert.equal(capabilitiesOf(machine()).snapshots, true);
    assert.equal(capabilitiesOf(machine({ kind: "dedicated" })).snapshots, false);
    const caps = capabilitiesOf(machine({ disabled_controls: ["reinstall"] }));
    assert.equal(caps.reinstall, false);
    assert.equal(caps.power, true);
  });

  it("never advertises rescue: no provider boots a rescue image and no route asks for one", () => {
    assert.equal(capabilitiesOf(machine()).rescue, false);
    assert.equal(capabilitiesOf(machine({ kind: "dedicated" })).rescue, false);
  });
});

describe("rule order for a control", () => {
  it("refuses in order: service state, instance, build, capability", () => {
    assert.equal(refusal(machine()), "");
    assert.equal(
      refusal(machine({ service_status: "suspended", has_instance: false, state: "creating" })),
      "FORBIDDEN",
    );
    assert.equal(refusal(machine({ service_status: "terminated" })), "FORBIDDEN");
    assert.equal(
      refusal(machine({ has_instance: false, state: "error", disabled_controls: ["power"] })),
      "NOT_FOUND",
    );
    assert.equal(refusal(machine({ has_instance: false, state: "creating" })), "CONFLICT");
    assert.equal(refusal(machine({ state: "creating", disabled_controls: ["power"] })), "CONFLICT");
    assert.equal(refusal(machine({ disabled_controls: ["power"] })), "ACTION_NOT_ALLOWED");
    assert.equal(refusal(machine({ kind: "dedicated" }), "snapshots"), "ACTION_NOT_ALLOWED");
  });
});

describe("machine summary", () => {
  it("shows an instance in state creating while the first build runs", () => {
    const building = machineSummary(machine({ has_instance: false, state: "creating" }), []);
    assert.equal(building.instance?.state, InstanceState.CREATING);
  });

  it("has no instance when not built, and a stable IPv4 primary address from a documentation range", () => {
    const a = addressesFor(machine().service_id);
    assert.deepEqual(a, addressesFor(machine().service_id));
    assert.match(a[0].address, /^203\.0\.113\.\d+$/);
    assert.match(a[1].address, /^2001:db8:/);
    const built = machineSummary(machine({ kind: "dedicated" }), a);
    assert.equal(built.kind, MachineKind.DEDICATED);
    assert.equal(built.ipAddresses?.primaryIp, a[0].address);
    assert.equal(built.ipAddresses?.addresses[1].purpose, IpAddressPurpose.PRIMARY);
    assert.equal(built.instance?.state, InstanceState.RUNNING);
    assert.equal(built.instance?.osImageId, "debian-12");
    assert.equal(built.capabilities?.snapshots, false);
    assert.equal(machineSummary(machine({ has_instance: false, state: "error" }), []).instance, undefined);
    assert.equal(
      machineSummary(machine({ has_instance: false, state: "stopped" }), []).instance,
      undefined,
      "destroyed (terminated)",
    );
    assert.equal(machineSummary(machine(), []).ipAddresses?.primaryIp, undefined, "no address yet");
  });
});
