import type { Logger, Sql } from "@hb/platform";
import { driverOf } from "./context.ts";
import type { Drivers } from "./driver.ts";
import type { MachineRow } from "./machines.ts";
import { downsample, oldestKept, TIERS, type UsageBucket, type UsageReading } from "./usage-tiers.ts";

/** How many machines' drivers are asked at once: LXD answers each over its socket or HTTPS. */
const CONCURRENCY = 8;
/** Machines read, sampled and written per step of a pass: bounds a pass's memory. */
const MACHINES_PER_STEP = 500;
/** Rows per statement: each column goes as one array parameter, so this bounds the statement's size. */
const ROWS_PER_STATEMENT = 4000;

/** The previous network counters of a machine, for the rate between two readings. */
type Counters = { at: number; rx: number; tx: number };

export interface UsageSampler {
  /** One pass now: reads every machine with an instance and writes its readings; resolves with how many. */
  pass(now?: Date): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Records usage history: every `intervalMs` it asks each machine's driver for its figures (the
 * LXD driver's real ones, the simulator's own), and folds the readings into the tiers'
 * buckets with one batched upsert per pass (never a statement per machine), pruning each tier
 * past its span in the pass's first statement. Buckets hold sums and counts, so two replicas sampling at
 * once only add readings: the averages stay right. Network counters are remembered in memory; the
 * first reading after a start has no rate, and a counter that went down (a restarted container)
 * gives none either.
 */
export function startUsageSampler(
  sql: Sql,
  drivers: Drivers,
  log: Logger,
  intervalMs: number,
  perStep = MACHINES_PER_STEP,
): UsageSampler {
  const previous = new Map<string, Counters>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;

  const readingOf = async (m: MachineRow, now: Date): Promise<UsageReading | undefined> => {
    let s: Awaited<ReturnType<ReturnType<typeof driverOf>["stats"]>>;
    try {
      s = await driverOf(drivers, m).stats(m);
    } catch (err) {
      // One machine the provider cannot answer for is skipped; the others are still recorded.
      log.debug("usage reading failed", { serviceId: m.service_id, err });
      return undefined;
    }
    const at = now.getTime();
    const prev = previous.get(m.service_id);
    previous.set(m.service_id, { at, rx: s.network.rx_bytes, tx: s.network.tx_bytes });
    const elapsedS = prev ? (at - prev.at) / 1000 : 0;
    const rate =
      prev && elapsedS > 0 && s.network.rx_bytes >= prev.rx && s.network.tx_bytes >= prev.tx
        ? {
            rxBps: (s.network.rx_bytes - prev.rx) / elapsedS,
            txBps: (s.network.tx_bytes - prev.tx) / elapsedS,
          }
        : {};
    return {
      serviceId: m.service_id,
      at: now,
      cpuPercent: s.cpu.usage_percent,
      memoryUsedMb: s.memory.used_mb,
      memoryTotalMb: s.memory.total_mb,
      diskUsedGb: s.disk.used_gb,
      diskTotalGb: s.disk.total_gb,
      ...rate,
    };
  };

  /** Removes each tier's buckets past its span: once per pass, in the statement of its first write. */
  const pruneClause = (now: Date) => sql`
    with pruned as (
      delete from usage_buckets u using unnest(
        ${TIERS.map((t) => t.stepS)}::int[], ${TIERS.map((t) => oldestKept(t, now).toISOString())}::timestamptz[]
      ) as t(step_s, oldest)
      where u.step_s = t.step_s and u.bucket_at < t.oldest
    )`;

  async function write(buckets: UsageBucket[], now: Date, pruning: boolean): Promise<void> {
    const col = <T>(f: (b: UsageBucket) => T) => buckets.map(f);
    await sql`
      ${pruning ? pruneClause(now) : sql``}
      insert into usage_buckets (service_id, step_s, bucket_at, samples, cpu_percent_sum,
        memory_used_mb_sum, memory_total_mb, disk_used_gb_sum, disk_total_gb, net_samples,
        rx_bps_sum, tx_bps_sum)
      select * from unnest(
        ${col((b) => b.serviceId)}::uuid[], ${col((b) => b.stepS)}::int[],
        ${col((b) => b.bucketAt.toISOString())}::timestamptz[], ${col((b) => b.samples)}::int[],
        ${col((b) => b.cpuPercentSum)}::float8[], ${col((b) => b.memoryUsedMbSum)}::float8[],
        ${col((b) => b.memoryTotalMb)}::int[], ${col((b) => b.diskUsedGbSum)}::float8[],
        ${col((b) => b.diskTotalGb)}::int[], ${col((b) => b.netSamples)}::int[],
        ${col((b) => b.rxBpsSum)}::float8[], ${col((b) => b.txBpsSum)}::float8[])
      on conflict (service_id, step_s, bucket_at) do update set
        samples = usage_buckets.samples + excluded.samples,
        cpu_percent_sum = usage_buckets.cpu_percent_sum + excluded.cpu_percent_sum,
        memory_used_mb_sum = usage_buckets.memory_used_mb_sum + excluded.memory_used_mb_sum,
        memory_total_mb = excluded.memory_total_mb,
        disk_used_gb_sum = usage_buckets.disk_used_gb_sum + excluded.disk_used_gb_sum,
        disk_total_gb = excluded.disk_total_gb,
        net_samples = usage_buckets.net_samples + excluded.net_samples,
        rx_bps_sum = usage_buckets.rx_bps_sum + excluded.rx_bps_sum,
        tx_bps_sum = usage_buckets.tx_bps_sum + excluded.tx_bps_sum`;
  }

  /**
   * One pass, a page of machines at a time: read their drivers, fold and write their buckets, then
   * the next page. What a pass holds at once is one page's rows, readings and buckets, however many
   * machines the host has (the whole table read at once held tens of MB in compute's heap with
   * thousands of machines, once a minute, and its RSS kept the peak).
   */
  async function pass(now = new Date()): Promise<number> {
    const seen = new Set<string>();
    let after: string | undefined;
    let count = 0;
    for (;;) {
      const machines = await sql<MachineRow[]>`
        select * from machines
        where has_instance ${after ? sql`and service_id > ${after}::uuid` : sql``}
        order by service_id limit ${perStep}`;
      const readings: UsageReading[] = [];
      let next = 0;
      const worker = async () => {
        while (next < machines.length) {
          const m = machines[next++] as MachineRow;
          const r = await readingOf(m, now);
          if (r) readings.push(r);
        }
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, machines.length) }, worker));
      for (const m of machines) seen.add(m.service_id);
      const buckets = TIERS.flatMap((t) => downsample(readings, t));
      // The pass's first statement prunes, and runs even with nothing to write.
      const firstPage = after === undefined;
      for (let i = 0; i < buckets.length || (i === 0 && firstPage); i += ROWS_PER_STATEMENT) {
        await write(buckets.slice(i, i + ROWS_PER_STATEMENT), now, i === 0 && firstPage);
      }
      count += readings.length;
      if (machines.length < perStep) break;
      after = (machines[machines.length - 1] as MachineRow).service_id;
    }
    for (const id of previous.keys()) if (!seen.has(id)) previous.delete(id);
    return count;
  }

  const runPass = () => {
    const p = (running ?? Promise.resolve(0)).then(
      () => pass(),
      () => pass(),
    );
    running = p;
    return p;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(async () => {
      try {
        await runPass();
      } catch (err) {
        log.warn("usage sampling pass failed", { err });
      }
      schedule();
    }, intervalMs);
    timer.unref?.();
  };
  schedule();

  return {
    pass: (now) => (now ? pass(now) : runPass()),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
