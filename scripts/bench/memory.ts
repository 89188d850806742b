/** The bench's memory part (scripts/bench.ts): each service's resident set idle and under a steady load. */
import autocannon from "autocannon";
import { SERVICE_NODE_ARGS, type Stack } from "../stack.ts";
import { procBytes } from "./scratch-stack.ts";

export function memoryTable(): string {
  if (memory.length === 0) return "Not measured in this run.";
  const names = Object.keys(memory[0].mb);
  return [
    `| When | ${names.join(" | ")} |`,
    `|---|${names.map(() => "---").join("|")}|`,
    ...memory.map((m) => `| ${m.when} | ${names.map((n) => m.mb[n]).join(" | ")} |`),
    "",
    `Services started with \`${process.env.HB_SERVICE_NODE_ARGS ?? SERVICE_NODE_ARGS}\` (scripts/stack.ts); targets: each under 120 MB idle and 160 MB under this load. Every row is one stack, started for them after the other parts ran (so the load rows show what the soak holds, not what the 50-connection rows left), with the compile cache those parts filled, as the image's is (deploy/Dockerfile; a first start with an empty cache also loads the TypeScript stripper, about 15 MB more).`,
  ].join("\n");
}

interface Rss {
  when: string;
  mb: Record<string, number>;
}
export const memory: Rss[] = [];

const rssMb = (pid: number) => Math.round(procBytes(pid, "VmRSS") / 2 ** 20);

/** Each service's resident set after `waitMs`. */
export async function rssOf(stack: Stack, when: string, waitMs = 0): Promise<Rss> {
  await new Promise((r) => setTimeout(r, waitMs));
  const mb = Object.fromEntries([...stack.procs].map(([name, p]) => [name, rssMb(p.pid!)]));
  process.stdout.write(`${JSON.stringify({ rss: when, mb })}\n`);
  return { when, mb };
}

/** The soak's load: the keyed index and the VPS page alternated, `rate` requests a second. */
export const soakLoad = (stack: Stack, key: string, seconds: number, rate: number) =>
  autocannon({
    url: `${stack.gatewayUrl}/api/v1/`,
    headers: { authorization: `Bearer ${key}` },
    connections: 10,
    overallRate: rate,
    duration: seconds,
    requests: [{ path: "/api/v1/" }, { path: "/api/v1/vps" }],
  });

/**
 * Steady load (BENCH_SOAK_RATE requests/s, default 200, alternating the keyed index and the VPS page)
 * for BENCH_SOAK_SECONDS (default 600): RSS after the first minute of it, at its end, and idle after.
 */
export async function soak(stack: Stack, key: string) {
  const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
  const rate = Number(process.env.BENCH_SOAK_RATE ?? 200);
  const warm = Math.min(60, Math.floor(seconds / 4));
  const run = soakLoad(stack, key, seconds, rate);
  memory.push(await rssOf(stack, `after ${warm} s of steady load (${rate} req/s)`, warm * 1000));
  const r = await run;
  memory.push(
    await rssOf(
      stack,
      `after ${seconds} s of steady load (${r.requests.total} requests, ${r.non2xx + r.errors} not 2xx)`,
    ),
  );
  memory.push(await rssOf(stack, "idle 15 s after the load", 15_000));
}
