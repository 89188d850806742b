import type { ServiceSummary } from "@hb/contracts/hb/billing/v1/services_pb";
import type { MachineRecord } from "@hb/contracts/hb/compute/v1/compute_pb";
import type { MachineKind, MachineSummary } from "@hb/contracts/hb/compute/v1/machines_pb";
import { apiError } from "@hb/platform";
import type { z } from "zod";
import { JsonText } from "../envelope.ts";
import { type HeldPage, HeldPages, NEVER_CHANGED } from "../held-pages.ts";
import { productKindWords } from "../mappers/enums.ts";
import { addressListJson } from "../mappers/ip-address.ts";
import { machineRecordsText } from "../mappers/machine-page.ts";
import { machineStatsJson, usageRange } from "../mappers/machine-stats.ts";
import { osImageListJson } from "../mappers/os-image.ts";
import { machinePageReads } from "../metrics.ts";
import type { Context } from "../route.ts";
import { pagination } from "../schemas.ts";
import type { usageRangeQuery } from "../wire/machine.ts";
import { required, type ServiceWire, serviceWire } from "./machine-common.ts";

type MachineMapper<T> = (s: ServiceWire, m: MachineSummary | undefined) => T;

/** A machine record on the wire; compute never sends one without its service. */
const recordOf = <T>(r: MachineRecord, map: MachineMapper<T>): T =>
  map(serviceWire(r.service as ServiceSummary), r.machine);

/**
 * A page of machines of one kind: one compute call, which answers from its copy of billing's
 * service records with each record's machine (docs/architecture.md, "Machine pages"). The records
 * arrive as their bytes and are written to JSON from them (mappers/machine-page.ts).
 */
export async function listMachines(
  ctx: Context<unknown, { page: number; limit: number }, unknown>,
  kind: "vps" | "dedicated",
) {
  const { page, limit } = ctx.query;
  const held = ctx.clients.machinePages;
  const key = HeldPages.key(ctx.caller.customerId ?? "", kind, page, limit);
  const known = held.get(key);
  const answer = await ctx.clients.compute.listMachineRecords({
    caller: ctx.caller,
    kind: productKindWords.value(kind),
    page,
    limit,
    knownVersion: known?.version,
  });
  let shown: HeldPage;
  if (answer.unchanged) {
    // Compute says so only of the version this request sent, which only a held page gives.
    if (!known) throw new Error("compute said a page stands that this gateway does not hold");
    shown = known;
    machinePageReads.labels({ outcome: "held" }).inc();
  } else {
    shown = {
      version: answer.version,
      data: new JsonText(machineRecordsText(answer.records, kind)),
      total: answer.total,
    };
    if (answer.version !== NEVER_CHANGED) held.set(key, shown);
    machinePageReads.labels({ outcome: "read" }).inc();
  }
  return {
    data: shown.data,
    extra: { pagination: pagination(page, limit, shown.total) },
  };
}

export async function getMachine<T>(
  ctx: Context<{ id: string }, unknown, unknown>,
  kind: "vps" | "dedicated",
  detail: MachineMapper<T>,
) {
  const { record } = await ctx.clients.compute.getMachineRecord({
    caller: ctx.caller,
    serviceId: ctx.params.id,
    kind: productKindWords.value(kind),
  });
  if (!record?.service) {
    throw apiError("NOT_FOUND", `${kind === "vps" ? "VPS" : "Dedicated server"} not found`);
  }
  return { data: recordOf(record, detail) };
}

type Compute = Context<unknown, unknown, unknown>["clients"]["compute"];
/** What every read about one machine sends: whose call, which service, which kind is expected. */
type MachineRef = {
  caller: Context<unknown, unknown, unknown>["caller"];
  serviceId: string;
  kind: MachineKind;
};

/** A read about one machine, mapped to the wire. */
export const read =
  <R>(kind: MachineKind, call: (compute: Compute, ref: MachineRef) => Promise<R>, map: (r: R) => unknown) =>
  async (ctx: Context<{ id: string }, unknown, unknown>) => ({
    data: map(await call(ctx.clients.compute, { caller: ctx.caller, serviceId: ctx.params.id, kind })),
  });

export const addresses = (kind: MachineKind) =>
  read(
    kind,
    (c, ref) => c.listIpAddresses(ref),
    (r) => addressListJson(r.ipAddresses),
  );
/** The live figures, and the usage history over ?range= when one is given. */
export const stats =
  (kind: MachineKind) => async (ctx: Context<{ id: string }, z.infer<typeof usageRangeQuery>, unknown>) => {
    const r = await ctx.clients.compute.getMachineStats({
      caller: ctx.caller,
      serviceId: ctx.params.id,
      kind,
      range: usageRange(ctx.query.range),
    });
    return { data: machineStatsJson(required(r.stats, "stats"), r.history) };
  };
export const STATS_RANGE =
  "; ?range=1h|24h|7d|30d adds the usage history (1-minute, 5-minute, 30-minute or 2-hour averages)";
export const images = (kind: MachineKind) =>
  read(
    kind,
    (c, ref) => c.listOsImages(ref),
    (r) => osImageListJson(r.images),
  );
