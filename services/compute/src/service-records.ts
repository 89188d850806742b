/**
 * Compute's copy of billing's service records (issue 31), and the machine pages read from it: a
 * page is one indexed read here, with each record's machine joined in, and no call to billing.
 *
 * Billing writes the whole record in the transaction of every change to it (on the service event
 * the change raises, or as a service.record_changed event); they arrive twice, handed over by billing before it answers the call that made
 * the change (read-your-writes) and through the stream (everything, the scheduled work included).
 * Each service keeps the record of its newest event (UUID v7 ids, in the order billing wrote
 * them), so the second arrival and any late or replayed event change nothing.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type ServiceSummary, ServiceSummarySchema } from "@hb/contracts/hb/billing/v1/services_pb";
import {
  ListMachineRecordsResponseSchema,
  type MachineRecord,
  MachineRecordSchema,
} from "@hb/contracts/hb/compute/v1/compute_pb";
import type { MachineSummary } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { Event } from "@hb/contracts/hb/events/v1/events_pb";
import { Histogram, isUuid, metricsRegistry, PAGE_SIZE, pageWindow, type Sql } from "@hb/platform";
import { callerId, type Handlers } from "./context.ts";
import { writeMachineSummary } from "./machine-bytes.ts";
import { type IpRow, type MachineView, machineSummary } from "./machines.ts";

export const SERVICE_RECORD_EVENT = "service.record_changed";

const applyLag = new Histogram({
  name: "compute_service_record_lag_seconds",
  help: "Time from billing's change to a service record to compute's copy showing it, by how it arrived (rpc: handed over before billing answered; stream: JetStream)",
  labelNames: ["via"],
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [metricsRegistry],
});

interface RecordRow {
  serviceId: string;
  customerId: string;
  kind: number;
  /** ISO text: postgres.js sends an array of Dates as one timestamp. */
  createdAt: string;
  summary: string;
  eventId: string;
  occurredAt: string;
}

/** Billing's record an event carries (a service event carries one too), if any. */
function carried(e: Event): ServiceSummary | undefined {
  if (e.payload.case === "serviceRecord") return e.payload.value.service;
  if (e.payload.case === "service") return e.payload.value.record;
  return undefined;
}

/** The record an event carries, or undefined for another event or a malformed one. */
function recordOf(e: Event): RecordRow | undefined {
  const s = carried(e);
  if (!s || !isUuid(e.id) || !isUuid(s.id) || !isUuid(s.customerId) || !s.createdAt || !e.occurredAt)
    return undefined;
  return {
    serviceId: s.id,
    customerId: s.customerId,
    kind: s.kind,
    createdAt: timestampDate(s.createdAt).toISOString(),
    summary: Buffer.from(toBinary(ServiceSummarySchema, s)).toString("hex"),
    eventId: e.id.toLowerCase(),
    occurredAt: timestampDate(e.occurredAt).toISOString(),
  };
}

/** Applies records, each only over an older one; returns how many were malformed and skipped. */
export async function applyServiceRecords(sql: Sql, events: Event[], via: "rpc" | "stream"): Promise<number> {
  const newest = new Map<string, RecordRow>();
  let skipped = 0;
  for (const e of events) {
    const r = recordOf(e);
    if (!r) {
      if (carried(e)) skipped++;
      continue;
    }
    const seen = newest.get(r.serviceId);
    // One row per service in the statement (an upsert may not touch a row twice): the newest.
    if (!seen || seen.eventId < r.eventId) newest.set(r.serviceId, r);
  }
  const rows = [...newest.values()];
  if (rows.length === 0) return skipped;
  const col = <K extends keyof RecordRow>(k: K) => rows.map((r) => r[k]);
  await sql`
    insert into service_records (service_id, customer_id, kind, created_at, summary, event_id, occurred_at)
    select r.service_id, r.customer_id, r.kind, r.created_at, decode(r.summary, 'hex'), r.event_id, r.occurred_at
    from unnest(${col("serviceId")}::uuid[], ${col("customerId")}::uuid[], ${col("kind")}::int2[],
                ${col("createdAt")}::timestamptz[], ${col("summary")}::text[], ${col("eventId")}::uuid[],
                ${col("occurredAt")}::timestamptz[])
      as r(service_id, customer_id, kind, created_at, summary, event_id, occurred_at)
    on conflict (service_id) do update set customer_id = excluded.customer_id, kind = excluded.kind,
      created_at = excluded.created_at, summary = excluded.summary, event_id = excluded.event_id,
      occurred_at = excluded.occurred_at, applied_at = now()
    where service_records.event_id < excluded.event_id`;
  const now = Date.now();
  for (const r of rows) applyLag.observe({ via }, Math.max(0, (now - Date.parse(r.occurredAt)) / 1000));
  return skipped;
}

type Fragment = ReturnType<Sql>;

type PageRow = MachineView & {
  summary: Buffer;
  machine_id: string | null;
  ips: IpRow[] | null;
};

/**
 * The records with their machines and addresses in one statement: the page (or the one record)
 * is read from service_records' index, and only its rows are joined.
 */
const pageRows = (sql: Sql, where: Fragment, window: { limit: number; offset: number }) =>
  sql<PageRow[]>`
    select r.summary, m.service_id as machine_id, m.kind, m.provider, m.hostname, m.location, m.state,
      m.has_instance, m.vcpus, m.memory_mb, m.disk_gb, m.os, m.rescue_mode, m.ssh_port, m.disabled_controls,
      m.lost_at,
      (select json_agg(json_build_object('address', a.address, 'version', a.version,
                 'prefix_length', a.prefix_length, 'purpose', a.purpose) order by a.version, a.address)
       from ip_addresses a where a.service_id = m.service_id) as ips
    from (select service_id, customer_id, summary, created_at from service_records ${where}
          order by created_at desc, service_id desc limit ${window.limit} offset ${window.offset}) r
    left join machines m on m.service_id = r.service_id and m.customer_id = r.customer_id
    order by r.created_at desc, r.service_id desc`;

const SERVICE_FIELD = MachineRecordSchema.field.service.number;

/**
 * A machine record whose `service` is billing's record exactly as stored, never decoded here:
 * it goes out as the bytes of a set `service` field (its tag, its length, the message), which is
 * what decoding and encoding it again would write (compute's largest cost per row otherwise).
 */
export function machineRecordOf(summary: Uint8Array, machine: MachineSummary | undefined): MachineRecord {
  const record = create(MachineRecordSchema, { machine });
  record.$unknown = [
    {
      no: SERVICE_FIELD,
      wireType: WireType.LengthDelimited,
      data: new BinaryWriter().bytes(summary).finish(),
    },
  ];
  return record;
}

const recordOut = (row: PageRow): MachineRecord =>
  machineRecordOf(
    row.summary,
    row.machine_id ? machineSummary({ ...row, service_id: row.machine_id }, row.ips ?? []) : undefined,
  );

const RECORDS_FIELD = ListMachineRecordsResponseSchema.field.records.number;
const MACHINE_FIELD = MachineRecordSchema.field.machine.number;

/**
 * The page's records as one unknown field of its answer, which toBinary writes as its tag and then
 * these bytes as they are: each record's length and MachineRecord, the `records` tag before each
 * but the first. The wire is the one toBinary writes for the same records as messages; here it is
 * written in one buffer, billing's record as stored and the machine straight from its row.
 */
function recordsBytes(rows: PageRow[]) {
  if (rows.length === 0) return [];
  const w = new BinaryWriter();
  for (const [i, row] of rows.entries()) {
    if (i > 0) w.tag(RECORDS_FIELD, WireType.LengthDelimited);
    w.fork();
    w.tag(SERVICE_FIELD, WireType.LengthDelimited).bytes(row.summary);
    if (row.machine_id) {
      w.tag(MACHINE_FIELD, WireType.LengthDelimited).fork();
      writeMachineSummary(w, { ...row, service_id: row.machine_id }, row.ips ?? []);
      w.join();
    }
    w.join();
  }
  return [{ no: RECORDS_FIELD, wireType: WireType.LengthDelimited, data: w.finish() }];
}

/** A customer's change rows past this many are compacted into one by the next read. */
const COMPACT_PAST = 32;

/**
 * The version of a customer's machine pages (migration 017): the sum of its change rows' weights,
 * which grows with every committed change to what the pages show. Read before the page, so a
 * page is never older than the version it is answered with. A customer with many change rows has
 * them summed into one here, which keeps the version and keeps this read short.
 */
export async function machinePageVersion(
  sql: Sql,
  customerId: string,
  compactPast = COMPACT_PAST,
): Promise<string> {
  const [v] = await sql<{ version: string; rows: number }[]>`
    select coalesce(sum(weight), 0)::text as version, count(*)::int as rows
    from machine_page_changes where customer_id = ${customerId}`;
  if ((v?.rows ?? 0) > compactPast) {
    // Rows of transactions not yet committed are not seen, so not deleted: they count when they are.
    await sql`
      with gone as (delete from machine_page_changes where customer_id = ${customerId} returning weight)
      insert into machine_page_changes (customer_id, xact, weight)
      select ${customerId}, pg_current_xact_id()::text::bigint, sum(weight) from gone having count(*) > 0`;
  }
  return v?.version ?? "0";
}

/** "0" is the version of a customer whose pages never changed, and the request's "none". */
const NO_VERSION = "0";

export function createServiceRecords(sql: Sql): Handlers {
  return {
    async listMachineRecords(req) {
      const customerId = callerId(req.caller);
      const version = await machinePageVersion(sql, customerId);
      if (version !== NO_VERSION && req.knownVersion === version)
        return create(ListMachineRecordsResponseSchema, { version, unchanged: true });
      const w = pageWindow(req.page, req.limit, PAGE_SIZE.machines);
      const where: Fragment = sql`where customer_id = ${customerId} and kind = ${req.kind}`;
      // Sent together: one round trip's time for the page and its count.
      const [rows, [count]] = await Promise.all([
        pageRows(sql, where, w),
        sql<{ n: number }[]>`select count(*)::int as n from service_records ${where}`,
      ]);
      // The records go out as the bytes written here (machine-bytes.ts), not as messages for
      // toBinary to walk: a record is billing's stored record and its machine, each written once.
      const page = create(ListMachineRecordsResponseSchema, { total: count?.n ?? 0, version });
      page.$unknown = recordsBytes(rows);
      return page;
    },

    async getMachineRecord(req) {
      const customerId = callerId(req.caller);
      const [row] = await pageRows(
        sql,
        sql`where service_id = ${req.serviceId} and customer_id = ${customerId} and kind = ${req.kind}`,
        { limit: 1, offset: 0 },
      );
      return { record: row ? recordOut(row) : undefined };
    },

    async applyServiceRecords(req) {
      await applyServiceRecords(sql, req.events, "rpc");
      return {};
    },
  };
}
