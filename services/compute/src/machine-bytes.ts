/**
 * A machine's MachineSummary written from its row (issue 31 §1): the bytes toBinary writes for
 * machineSummary() of the same row (machines.ts), without the messages. The VPS and dedicated
 * pages write fifty of these per call, and making and walking the messages was most of compute's
 * work per record. machine-bytes.test.ts holds the two to the same bytes.
 */
import { protoInt64 } from "@bufbuild/protobuf";
import { type BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import {
  CapabilitiesSchema,
  InstanceSchema,
  IpAddressesSchema,
  IpAddressSchema,
  MachineSummarySchema,
} from "@hb/contracts/hb/compute/v1/machines_pb";
import { instanceStates, ipPurposes, machineKinds } from "./enums.ts";
import { CONTROLS, capable, hasInstance, type IpRow, type MachineView } from "./machines.ts";

const M = MachineSummarySchema.field;
const IPS = IpAddressesSchema.field;
const IP = IpAddressSchema.field;
const INST = InstanceSchema.field;
const TS = TimestampSchema.field;
const CAP = CapabilitiesSchema.field;
const LD = WireType.LengthDelimited;
const VARINT = WireType.Varint;

// proto3: a field without presence is left out when it holds its zero value, as toBinary does.
const str = (w: BinaryWriter, no: number, v: string) => {
  if (v !== "") w.tag(no, LD).string(v);
};
const int = (w: BinaryWriter, no: number, v: number) => {
  if (v !== 0) w.tag(no, VARINT).int32(v);
};
const bool = (w: BinaryWriter, no: number, v: boolean) => {
  if (v) w.tag(no, VARINT).bool(true);
};

export function writeMachineSummary(w: BinaryWriter, m: MachineView, ips: IpRow[]): void {
  str(w, M.serviceId.number, m.service_id);
  int(w, M.kind.number, machineKinds.of(m.kind));
  str(w, M.provider.number, m.provider);
  str(w, M.hostname.number, m.hostname);
  str(w, M.location.number, m.location);

  // ipAddressesOf: the list, and the primary address (its first IPv4 one, else its first).
  w.tag(M.ipAddresses.number, LD).fork();
  for (const ip of ips) {
    w.tag(IPS.addresses.number, LD).fork();
    str(w, IP.address.number, ip.address);
    int(w, IP.version.number, ip.version);
    int(w, IP.prefixLength.number, ip.prefix_length);
    int(w, IP.purpose.number, ipPurposes.of(ip.purpose));
    w.join();
  }
  const primary = ips.find((i) => i.version === 4) ?? ips[0];
  if (primary) w.tag(IPS.primaryIp.number, LD).string(primary.address);
  w.join();

  if (hasInstance(m)) {
    w.tag(M.instance.number, LD).fork();
    int(w, INST.state.number, instanceStates.of(m.state));
    int(w, INST.vcpus.number, m.vcpus);
    int(w, INST.memoryMb.number, m.memory_mb);
    int(w, INST.diskGb.number, m.disk_gb);
    str(w, INST.osImageId.number, m.os);
    bool(w, INST.rescueMode.number, m.rescue_mode);
    if (m.ssh_port !== null && m.ssh_port !== undefined) w.tag(INST.sshPort.number, VARINT).int32(m.ssh_port);
    if (m.lost_at) {
      // timestampFromDate: whole seconds down, the rest as nanoseconds.
      const ms = m.lost_at.getTime();
      const seconds = Math.floor(ms / 1000);
      w.tag(INST.lostAt.number, LD).fork();
      if (seconds !== 0) w.tag(TS.seconds.number, VARINT).int64(protoInt64.parse(seconds));
      int(w, TS.nanos.number, (ms - seconds * 1000) * 1_000_000);
      w.join();
    }
    w.join();
  }

  w.tag(M.capabilities.number, LD).fork();
  for (const c of CONTROLS) bool(w, CAP[c].number, capable(m, c));
  w.join();
}
