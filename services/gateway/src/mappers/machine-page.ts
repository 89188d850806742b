/**
 * The VPS and dedicated lists' records written as JSON straight from the bytes compute sends
 * (issue 31 §1). Decoding a page into protobuf-es messages, mapping them to wire objects and
 * JSON.stringify-ing those was most of the gateway's CPU per page (docs/benchmarks.md); here each
 * record is read once with the wire reader and its JSON text written as it is read.
 *
 * The text is the one `JSON.stringify(vpsRecordJson(...))` (machine.ts) writes for the same record:
 * the same fields in the same order, the same values, the same refusals of what the contract
 * does not allow (an unknown enum value, a missing time or amount fails the answer). The
 * gateway's tests hold the two to it (machine-page.test.ts); a field added to the record is added
 * to both.
 */

import type { DescMessage } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import {
  BillingTermsSchema,
  CancellationSchema,
  ServiceProductSchema,
  ServiceSummarySchema,
} from "@hb/contracts/hb/billing/v1/services_pb";
import { MachineRecordSchema } from "@hb/contracts/hb/compute/v1/compute_pb";
import {
  InstanceSchema,
  IpAddressesSchema,
  IpAddressSchema,
  MachineSummarySchema,
} from "@hb/contracts/hb/compute/v1/machines_pb";
import { MoneySchema } from "@hb/contracts/hb/platform/v1/money_pb";
import { formatMoney, money } from "@hb/platform/money";
import { instanceStates, ipPurposes } from "./compute-wire.ts";
import { billingCycleWords, productKindWords, serviceStatusWords } from "./enums.ts";
import { vpsStatus } from "./machine.ts";
import { cancellationTypes } from "./service.ts";

/**
 * The field numbers read here, from the generated descriptors, each checked to be of the kind read
 * (a field whose type changed in the contract fails at start-up, not on a customer's page).
 */
function fields<const N extends string>(
  desc: DescMessage,
  kinds: Record<N, "string" | "int" | "bool" | "message" | "messages">,
) {
  const out = {} as Record<N, number>;
  for (const [name, kind] of Object.entries(kinds) as [N, string][]) {
    const f = desc.fields.find((x) => x.localName === name);
    const actual =
      f?.fieldKind === "message"
        ? "message"
        : f?.fieldKind === "list" && f.listKind === "message"
          ? "messages"
          : f?.fieldKind === "enum"
            ? "int"
            : f?.fieldKind === "scalar"
              ? f.scalar === ScalarType.STRING
                ? "string"
                : f.scalar === ScalarType.BOOL
                  ? "bool"
                  : f.scalar === ScalarType.INT32 || f.scalar === ScalarType.INT64
                    ? "int"
                    : "other"
              : "other";
    if (!f || actual !== kind) throw new Error(`${desc.typeName}.${name} is not a ${kind} field`);
    out[name] = f.number;
  }
  return out;
}

const REC = fields(MachineRecordSchema, { service: "message", machine: "message" });
const SVC = fields(ServiceSummarySchema, {
  id: "string",
  name: "string",
  hostname: "string",
  kind: "int",
  status: "int",
  product: "message",
  billing: "message",
  cancellation: "message",
  createdAt: "message",
});
const PRODUCT = fields(ServiceProductSchema, { id: "string", name: "string" });
const TERMS = fields(BillingTermsSchema, { cycle: "int", price: "message", nextDueDate: "message" });
const MONEY = fields(MoneySchema, { currency: "string", amount: "string" });
const CANCEL = fields(CancellationSchema, {
  type: "int",
  reason: "string",
  requestedAt: "message",
  effectiveAt: "message",
});
const TS = fields(TimestampSchema, { seconds: "int", nanos: "int" });
const MACHINE = fields(MachineSummarySchema, {
  provider: "string",
  hostname: "string",
  location: "string",
  ipAddresses: "message",
  instance: "message",
});
const IPS = fields(IpAddressesSchema, { addresses: "messages", primaryIp: "string" });
const IP = fields(IpAddressSchema, {
  address: "string",
  version: "int",
  prefixLength: "int",
  purpose: "int",
});
const INSTANCE = fields(InstanceSchema, {
  state: "int",
  vcpus: "int",
  memoryMb: "int",
  diskGb: "int",
  osImageId: "string",
  rescueMode: "bool",
  sshPort: "int",
});

/** The end of the length-delimited value the reader is at (its length read). */
function delimited(r: BinaryReader, wireType: number): number {
  if (wireType !== WireType.LengthDelimited)
    throw new Error(`expected a length-delimited field, got wire type ${wireType}`);
  const len = r.uint32();
  const end = r.pos + len;
  if (end > r.len) throw new RangeError("premature EOF");
  return end;
}

/** Field number and wire type of the next tag, as BinaryReader.tag() checks them, without its array. */
function tag(r: BinaryReader): number {
  const t = r.uint32();
  if (t >>> 3 <= 0 || (t & 7) > 5) throw new Error(`illegal tag: field no ${t >>> 3} wire type ${t & 7}`);
  return t;
}

/** A Timestamp as milliseconds, as protobuf-es's timestampMs computes it from the message. */
function readTime(r: BinaryReader, end: number, into: { ms?: number; s: number; n: number }) {
  while (r.pos < end) {
    const t = tag(r);
    const no = t >>> 3;
    if (no === TS.seconds) into.s = Number(r.int64());
    else if (no === TS.nanos) into.n = r.int32();
    else r.skip(t & 7, no);
  }
  into.ms = into.s * 1000 + Math.round(into.n / 1000000);
}

interface Time {
  ms?: number;
  s: number;
  n: number;
}
const time = (): Time => ({ ms: undefined, s: 0, n: 0 });

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const LAST_4_DIGIT_YEAR_MS = 253_402_300_799_999;

/**
 * Date.prototype.toISOString of a whole number of milliseconds, for years 1970 to 9999 without a
 * Date (a Date and its formatting were a tenth of the page's CPU): the civil date of the day
 * (H. Hinnant's days-to-civil algorithm), then the time of day. Anything else goes to a Date.
 */
function isoOf(ms: number): string {
  if (!(ms >= 0 && ms <= LAST_4_DIGIT_YEAR_MS)) return new Date(ms).toISOString();
  const days = Math.floor(ms / 86_400_000);
  let rest = ms - days * 86_400_000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const min = Math.floor(rest / 60_000);
  rest -= min * 60_000;
  const sec = Math.floor(rest / 1000);
  const milli = rest - sec * 1000;
  const ms3 = milli < 10 ? `00${milli}` : milli < 100 ? `0${milli}` : `${milli}`;
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(h)}:${pad2(min)}:${pad2(sec)}.${ms3}Z`;
}

/** An instant as the spec writes it (mappers/contract.ts iso): a missing one is a backend bug. */
function isoText(t: Time): string {
  if (t.ms === undefined) throw new Error("the backend sent no time");
  return `"${isoOf(t.ms)}"`;
}

/**
 * decimal4 (mappers/contract.ts) of an amount: a page repeats a few prices, so each is read and
 * written once (the map is emptied, not grown, past a bound).
 */
const amounts = new Map<string, string>();
function amountText(amount: string): string {
  let text = amounts.get(amount);
  if (text === undefined) {
    text = formatMoney(money(amount));
    if (amounts.size >= 1024) amounts.clear();
    amounts.set(amount, text);
  }
  return text;
}

const str = JSON.stringify;

interface Service {
  id: string;
  name: string;
  hostname: string;
  kind: number;
  status: number;
  productId: string;
  productName: string;
  cycle: number;
  hasPrice: boolean;
  currency: string;
  amount: string;
  due: Time;
  hasCancellation: boolean;
  cancelType: number;
  cancelReason: string;
  requested: Time;
  effective: Time;
  created: Time;
}

const newService = (): Service => ({
  id: "",
  name: "",
  hostname: "",
  kind: 0,
  status: 0,
  productId: "",
  productName: "",
  cycle: 0,
  hasPrice: false,
  currency: "",
  amount: "",
  due: time(),
  hasCancellation: false,
  cancelType: 0,
  cancelReason: "",
  requested: time(),
  effective: time(),
  created: time(),
});

// A singular message field seen twice is merged, as protobuf-es does: each reader reads into the
// object the first occurrence made.
function readService(r: BinaryReader, end: number, s: Service) {
  while (r.pos < end) {
    const t = tag(r);
    const no = t >>> 3;
    switch (no) {
      case SVC.id:
        s.id = r.string(true);
        break;
      case SVC.name:
        s.name = r.string(true);
        break;
      case SVC.hostname:
        s.hostname = r.string(true);
        break;
      case SVC.kind:
        s.kind = r.int32();
        break;
      case SVC.status:
        s.status = r.int32();
        break;
      case SVC.product: {
        const e = delimited(r, t & 7);
        while (r.pos < e) {
          const u = tag(r);
          if (u >>> 3 === PRODUCT.id) s.productId = r.string(true);
          else if (u >>> 3 === PRODUCT.name) s.productName = r.string(true);
          else r.skip(u & 7, u >>> 3);
        }
        break;
      }
      case SVC.billing:
        readTerms(r, delimited(r, t & 7), s);
        break;
      case SVC.cancellation: {
        s.hasCancellation = true;
        const e = delimited(r, t & 7);
        while (r.pos < e) {
          const u = tag(r);
          const n = u >>> 3;
          if (n === CANCEL.type) s.cancelType = r.int32();
          else if (n === CANCEL.reason) s.cancelReason = r.string(true);
          else if (n === CANCEL.requestedAt) readTime(r, delimited(r, u & 7), s.requested);
          else if (n === CANCEL.effectiveAt) readTime(r, delimited(r, u & 7), s.effective);
          else r.skip(u & 7, n);
        }
        break;
      }
      case SVC.createdAt:
        readTime(r, delimited(r, t & 7), s.created);
        break;
      default:
        r.skip(t & 7, no);
    }
  }
}

function readTerms(r: BinaryReader, end: number, s: Service) {
  while (r.pos < end) {
    const t = tag(r);
    const no = t >>> 3;
    if (no === TERMS.cycle) s.cycle = r.int32();
    else if (no === TERMS.nextDueDate) readTime(r, delimited(r, t & 7), s.due);
    else if (no === TERMS.price) {
      s.hasPrice = true;
      const e = delimited(r, t & 7);
      while (r.pos < e) {
        const u = tag(r);
        if (u >>> 3 === MONEY.currency) s.currency = r.string(true);
        else if (u >>> 3 === MONEY.amount) s.amount = r.string(true);
        else r.skip(u & 7, u >>> 3);
      }
    } else r.skip(t & 7, no);
  }
}

interface Address {
  address: string;
  version: number;
  prefixLength: number;
  purpose: number;
}

interface Machine {
  provider: string;
  hostname: string;
  location: string;
  primaryIp: string | undefined;
  addresses: Address[];
  hasInstance: boolean;
  state: number;
  vcpus: number;
  memoryMb: number;
  diskGb: number;
  os: string;
  rescueMode: boolean;
  sshPort: number | undefined;
}

const newMachine = (): Machine => ({
  provider: "",
  hostname: "",
  location: "",
  primaryIp: undefined,
  addresses: [],
  hasInstance: false,
  state: 0,
  vcpus: 0,
  memoryMb: 0,
  diskGb: 0,
  os: "",
  rescueMode: false,
  sshPort: undefined,
});

function readMachine(r: BinaryReader, end: number, m: Machine) {
  while (r.pos < end) {
    const t = tag(r);
    const no = t >>> 3;
    switch (no) {
      case MACHINE.provider:
        m.provider = r.string(true);
        break;
      case MACHINE.hostname:
        m.hostname = r.string(true);
        break;
      case MACHINE.location:
        m.location = r.string(true);
        break;
      case MACHINE.ipAddresses: {
        const e = delimited(r, t & 7);
        while (r.pos < e) {
          const u = tag(r);
          if (u >>> 3 === IPS.primaryIp) m.primaryIp = r.string(true);
          else if (u >>> 3 === IPS.addresses) m.addresses.push(readAddress(r, delimited(r, u & 7)));
          else r.skip(u & 7, u >>> 3);
        }
        break;
      }
      case MACHINE.instance: {
        m.hasInstance = true;
        const e = delimited(r, t & 7);
        while (r.pos < e) {
          const u = tag(r);
          const n = u >>> 3;
          if (n === INSTANCE.state) m.state = r.int32();
          else if (n === INSTANCE.vcpus) m.vcpus = r.int32();
          else if (n === INSTANCE.memoryMb) m.memoryMb = r.int32();
          else if (n === INSTANCE.diskGb) m.diskGb = r.int32();
          else if (n === INSTANCE.osImageId) m.os = r.string(true);
          else if (n === INSTANCE.rescueMode) m.rescueMode = r.bool();
          else if (n === INSTANCE.sshPort) m.sshPort = r.int32();
          else r.skip(u & 7, n);
        }
        break;
      }
      default:
        r.skip(t & 7, no);
    }
  }
}

function readAddress(r: BinaryReader, end: number): Address {
  const a: Address = { address: "", version: 0, prefixLength: 0, purpose: 0 };
  while (r.pos < end) {
    const t = tag(r);
    const no = t >>> 3;
    if (no === IP.address) a.address = r.string(true);
    else if (no === IP.version) a.version = r.int32();
    else if (no === IP.prefixLength) a.prefixLength = r.int32();
    else if (no === IP.purpose) a.purpose = r.int32();
    else r.skip(t & 7, no);
  }
  return a;
}

function addressText(a: Address): string {
  if (a.version !== 4 && a.version !== 6) throw new Error(`compute sent IP version ${a.version}`);
  return `{"address":${str(a.address)},"version":${a.version},"prefix_length":${a.prefixLength},"purpose":${str(ipPurposes.name(a.purpose))}}`;
}

/**
 * One machine record of the lists (an encoded MachineRecord) as the JSON text of `vpsRecord` or
 * `dedicatedRecord` (wire/machine.ts).
 */
export function machineRecordText(bytes: Uint8Array, kind: "vps" | "dedicated"): string {
  const r = new BinaryReader(bytes);
  let s: Service | undefined;
  let m: Machine | undefined;
  while (r.pos < r.len) {
    const t = tag(r);
    const no = t >>> 3;
    if (no === REC.service) {
      s ??= newService();
      readService(r, delimited(r, t & 7), s);
    } else if (no === REC.machine) {
      m ??= newMachine();
      readMachine(r, delimited(r, t & 7), m);
    } else r.skip(t & 7, no);
  }
  if (!s) throw new Error("compute sent a machine record without its service");
  // The checks serviceSummaryJson makes of billing's half, in its order.
  productKindWords.wire(s.kind);
  const status = vpsStatus(serviceStatusWords.wire(s.status));
  const cycle = billingCycleWords.wire(s.cycle);
  if (!s.hasPrice) throw new Error("the backend sent no amount");
  const amount = amountText(s.amount);
  const due = isoText(s.due);
  const cancellation = s.hasCancellation
    ? `{"type":${str(cancellationTypes.wire(s.cancelType))},"reason":${str(s.cancelReason)},"requested_at":${isoText(s.requested)},"effective_at":${isoText(s.effective)}}`
    : "null";
  const created = isoText(s.created);
  let addresses = "";
  for (const a of m?.addresses ?? []) addresses += (addresses ? "," : "") + addressText(a);
  const instance = m?.hasInstance
    ? `,"instance":{"state":${str(instanceStates.name(m.state))},"vcpus":${m.vcpus},"memory_mb":${m.memoryMb},"disk_gb":${m.diskGb},"os":${str(m.os)},"rescue_mode":${m.rescueMode}${m.sshPort === undefined ? "" : `,"ssh_port":${m.sshPort}`}}`
    : "";
  return (
    `{"id":${str(s.id)},"name":${str(s.name)},"hostname":${str(m?.hostname || s.hostname)},"status":"${status}",` +
    `"kind":"${kind}","provider":${str(m?.provider ?? "")},` +
    `"product":{"id":${str(s.productId)},"name":${str(s.productName)}},` +
    `"billing":{"cycle":"${cycle}","amount":${str(amount)},"currency":${str(s.currency)},"next_due_date":${due}},` +
    `"cancellation":${cancellation},"location":${str(m?.location ?? "")},"primary_ip":${str(m?.primaryIp ?? "")},` +
    `"ip_addresses":[${addresses}]${instance},"created_at":${created}}`
  );
}

/** A page of encoded machine records as the JSON text of their array. */
export function machineRecordsText(records: Uint8Array[], kind: "vps" | "dedicated"): string {
  let out = "[";
  for (let i = 0; i < records.length; i++) out += (i ? "," : "") + machineRecordText(records[i], kind);
  return `${out}]`;
}
