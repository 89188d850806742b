/** One autocannon measurement of the bench (scripts/bench.ts), with the CPU each process spent per request. */
import autocannon from "autocannon";
import { cpuTicks } from "./scratch-stack.ts";

/** Each measurement's length (BENCH_SECONDS, default 8). */
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** Load generator connections (BENCH_CONNECTIONS, default 50). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

export interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  cpuUsPerReq: Record<string, number>;
}

export async function measure(
  name: string,
  url: string,
  headers: Record<string, string>,
  pids: Record<string, number>,
  extra: Partial<autocannon.Options> = {},
  warmup = true,
): Promise<Result> {
  if (warmup) await autocannon({ url, headers, connections: CONNECTIONS, duration: 2, ...extra });
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTicks(pid)]));
  const r = await autocannon({ url, headers, connections: CONNECTIONS, duration: SECONDS, ...extra });
  const total = r.requests.total || 1;
  const cpuUsPerReq = Object.fromEntries(
    Object.entries(pids).map(([k, pid]) => [k, Math.round(((cpuTicks(pid) - before[k]) * 10_000) / total)]),
  );
  const result = {
    name,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    cpuUsPerReq,
  };
  // Which answers were not 2xx (an RPC deadline under overload is a 503, as a service that is
  // down): printed only, the report keeps the count.
  const statuses = Object.fromEntries(
    Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]),
  );
  process.stdout.write(`${JSON.stringify({ ...result, statuses })}\n`);
  return result;
}
