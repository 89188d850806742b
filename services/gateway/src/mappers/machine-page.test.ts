import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clone, create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { CancellationType } from "@hb/contracts/hb/billing/v1/services_pb";
import { type MachineRecord, MachineRecordSchema } from "@hb/contracts/hb/compute/v1/compute_pb";
import { InstanceState, IpAddressPurpose, MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import fc from "fast-check";
import { serviceWire } from "../routes/machine-common.ts";
import { dedicatedRecord, vpsRecord } from "../wire/machine.ts";
import { dedicatedRecordJson, vpsRecordJson } from "./machine.ts";
import { machineRecordsText, machineRecordText } from "./machine-page.ts";

/** What the lists wrote before: the record mapped to objects, then JSON.stringify. */
function mapped(r: MachineRecord, kind: "vps" | "dedicated"): string {
  const s = serviceWire(r.service!);
  return JSON.stringify(kind === "vps" ? vpsRecordJson(s, r.machine) : dedicatedRecordJson(s, r.machine));
}

const outcome = (f: () => string) => {
  try {
    return { text: f() };
  } catch {
    return { refused: true };
  }
};

const time = fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }).map(timestampFromMs);
// Any text: quotes, controls, lone surrogates are written to the wire as UTF-8 replaces them.
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("", '"\\<>&\u2028', "é🙂"),
);
const ints = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const amount = fc.oneof(
  fc.constantFrom("5", "5.0000", "0.5", "-0.0040", "12.50", "00012.5000", "1234567890.1234"),
  fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n }).map((u) => (Number(u) / 1e4).toFixed(4)),
);

const record = fc.record(
  {
    service: fc.record(
      {
        id: text,
        customerId: text,
        name: text,
        hostname: text,
        kind: fc.constantFrom(ProductKind.VPS, ProductKind.DEDICATED, ProductKind.GAME),
        status: fc.constantFrom(
          ServiceStatus.PENDING_PAYMENT,
          ServiceStatus.PENDING,
          ServiceStatus.INSTALLING,
          ServiceStatus.ACTIVE,
          ServiceStatus.PROVISIONING_FAILED,
          ServiceStatus.SUSPENDED,
          ServiceStatus.TERMINATED,
          ServiceStatus.CANCELLED,
        ),
        product: fc.option(fc.record({ id: text, name: text }), { nil: undefined }),
        billing: fc.record({
          cycle: fc.constantFrom(
            BillingCycle.MONTHLY,
            BillingCycle.QUARTERLY,
            BillingCycle.SEMIANNUALLY,
            BillingCycle.ANNUALLY,
          ),
          price: fc.record({ currency: fc.constantFrom("EUR", "USD", ""), amount }),
          nextDueDate: time,
        }),
        cancellation: fc.option(
          fc.record({
            type: fc.constant(CancellationType.END_OF_TERM),
            reason: text,
            requestedAt: time,
            effectiveAt: time,
          }),
          { nil: undefined },
        ),
        createdAt: time,
        orderId: fc.option(text, { nil: undefined }),
      },
      { requiredKeys: ["id", "kind", "status", "billing", "createdAt"] },
    ),
    machine: fc.option(
      fc.record(
        {
          serviceId: text,
          kind: fc.constantFrom(MachineKind.VPS, MachineKind.DEDICATED),
          provider: text,
          hostname: fc.oneof(text, fc.constant("")),
          location: text,
          ipAddresses: fc.record(
            {
              addresses: fc.array(
                fc.record({
                  address: text,
                  version: fc.constantFrom(4, 6),
                  prefixLength: fc.integer({ min: 0, max: 128 }),
                  purpose: fc.constantFrom(IpAddressPurpose.PRIMARY, IpAddressPurpose.ADDITIONAL),
                }),
                { maxLength: 4 },
              ),
              primaryIp: fc.option(text, { nil: undefined }),
            },
            { requiredKeys: [] },
          ),
          instance: fc.option(
            fc.record(
              {
                state: fc.constantFrom(InstanceState.CREATING, InstanceState.RUNNING, InstanceState.STOPPED),
                vcpus: ints,
                memoryMb: ints,
                diskGb: ints,
                osImageId: text,
                rescueMode: fc.boolean(),
                sshPort: fc.option(ints, { nil: undefined }),
                lostAt: fc.option(time, { nil: undefined }),
              },
              { requiredKeys: ["state"] },
            ),
            { nil: undefined },
          ),
          capabilities: fc.record({ power: fc.boolean(), snapshots: fc.boolean() }),
        },
        { requiredKeys: ["serviceId", "ipAddresses"] },
      ),
      { nil: undefined },
    ),
  },
  { requiredKeys: ["service"] },
);

describe("the machine lists' records written from compute's bytes", () => {
  it("are, character for character, the JSON of the records mapped from decoded messages", () => {
    fc.assert(
      fc.property(record, fc.constantFrom("vps" as const, "dedicated" as const), (init, kind) => {
        const r = create(MachineRecordSchema, init);
        const bytes = toBinary(MachineRecordSchema, r);
        assert.deepEqual(
          outcome(() => machineRecordText(bytes, kind)),
          outcome(() => mapped(r, kind)),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it("refuse what the mapped records refuse: a value the gateway does not know, a missing time or amount", () => {
    const good = create(MachineRecordSchema, {
      service: {
        id: "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c11",
        kind: ProductKind.VPS,
        status: ServiceStatus.ACTIVE,
        product: { id: "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c12", name: "VPS Small" },
        billing: {
          cycle: BillingCycle.MONTHLY,
          price: { currency: "EUR", amount: "5" },
          nextDueDate: timestampFromMs(0),
        },
        createdAt: timestampFromMs(0),
      },
      machine: {
        ipAddresses: { addresses: [{ address: "203.0.113.9", version: 4, prefixLength: 24, purpose: 1 }] },
      },
    });
    const text = machineRecordText(toBinary(MachineRecordSchema, good), "vps");
    assert.equal(text, mapped(good, "vps"));
    vpsRecord.parse(JSON.parse(text));
    dedicatedRecord.parse(JSON.parse(machineRecordText(toBinary(MachineRecordSchema, good), "dedicated")));
    const broken: ((r: MachineRecord) => void)[] = [
      (r) => {
        r.service!.status = 99 as ServiceStatus;
      },
      (r) => {
        r.service!.kind = 0;
      },
      (r) => {
        r.service!.billing!.price = undefined;
      },
      (r) => {
        r.service!.billing!.price!.amount = "5.00001";
      },
      (r) => {
        r.service!.createdAt = undefined;
      },
      (r) => {
        r.service!.billing!.nextDueDate = undefined;
      },
      (r) => {
        r.machine!.ipAddresses!.addresses[0].version = 5;
      },
      (r) => {
        r.machine!.ipAddresses!.addresses[0].purpose = 0;
      },
      (r) => {
        r.service = undefined;
      },
    ];
    for (const change of broken) {
      const r = clone(MachineRecordSchema, good);
      change(r);
      assert.throws(() => machineRecordText(toBinary(MachineRecordSchema, r), "vps"), String(change));
    }
  });

  it("merge a message field sent twice, as a decoder does", () => {
    const first = create(MachineRecordSchema, {
      service: { id: "a", name: "first", kind: ProductKind.VPS, status: ServiceStatus.ACTIVE },
    });
    const second = create(MachineRecordSchema, {
      service: {
        name: "second",
        billing: { cycle: BillingCycle.MONTHLY, price: { amount: "1" }, nextDueDate: timestampFromMs(5) },
        createdAt: timestampFromMs(7),
      },
    });
    const bytes = new Uint8Array([
      ...toBinary(MachineRecordSchema, first),
      ...toBinary(MachineRecordSchema, second),
    ]);
    const text = JSON.parse(machineRecordText(bytes, "vps"));
    assert.equal(text.id, "a");
    assert.equal(text.name, "second");
    assert.equal(text.created_at, "1970-01-01T00:00:00.007Z");
  });

  it("write a page as the array of its records", () => {
    assert.equal(machineRecordsText([], "vps"), "[]");
  });
});
