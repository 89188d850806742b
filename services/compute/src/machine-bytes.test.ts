import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toBinary } from "@bufbuild/protobuf";
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { MachineSummarySchema } from "@hb/contracts/hb/compute/v1/machines_pb";
import fc from "fast-check";
import { writeMachineSummary } from "./machine-bytes.ts";
import { CONTROLS, type IpRow, type MachineView, machineSummary } from "./machines.ts";

const text = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.constantFrom("", "é🙂"));
const ints = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const word = (...words: string[]) => fc.constantFrom(...words, "");

const row: fc.Arbitrary<MachineView> = fc.record({
  service_id: text,
  kind: word("vps", "dedicated", "game", "nonsense"),
  provider: text,
  hostname: text,
  location: text,
  state: word("creating", "running", "stopped", "paused", "error", "absent"),
  has_instance: fc.boolean(),
  vcpus: ints,
  memory_mb: ints,
  disk_gb: ints,
  os: text,
  rescue_mode: fc.boolean(),
  ssh_port: fc.option(ints, { nil: null }),
  disabled_controls: fc.subarray([...CONTROLS, "other"]),
  lost_at: fc.option(
    fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }).map((ms) => new Date(ms)),
    { nil: null },
  ),
});
const ips: fc.Arbitrary<IpRow[]> = fc.array(
  fc.record({
    address: text,
    version: fc.constantFrom(4, 6, 0),
    prefix_length: fc.integer({ min: 0, max: 128 }),
    purpose: word("primary", "additional", "other"),
  }),
  { maxLength: 4 },
);

describe("a machine written from its row", () => {
  it("is the bytes toBinary writes for the message machineSummary makes of the same row", () => {
    fc.assert(
      fc.property(row, ips, (m, addresses) => {
        const w = new BinaryWriter();
        writeMachineSummary(w, m, addresses);
        assert.deepEqual(w.finish(), toBinary(MachineSummarySchema, machineSummary(m, addresses)));
      }),
      { numRuns: 2000 },
    );
  });
});
