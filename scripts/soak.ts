/**
 * `npm run soak` (opt-in, not part of `npm test`): starts the stack, drives a steady load for
 * SOAK_MINUTES (default 10) — keyed GET /api/v1/ at SOAK_RATE requests a second (default 200)
 * through autocannon, plus one order settled from credit every SOAK_ORDER_MS (default 1000) —
 * and samples every service process's resident memory every 5 s. It reports each service's idle
 * RSS (after start-up and set-up, before the load), its RSS once warmed up (the median over the
 * second tenth of the run), at the end (the median over the last tenth) and the growth between
 * the two, beside a bare node:http process's RSS as the floor of the same run. Exits 1 when any
 * service grew more than SOAK_MAX_GROWTH percent (default 10).
 */
import { type ChildProcess, spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { BillingCycle, ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import autocannon from "autocannon";
import { localDependencies, procBytes, withScratchStack } from "./bench/scratch-stack.ts";
import { adminClients, fundedCustomer } from "./bench/seed.ts";

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const RATE = Number(process.env.SOAK_RATE ?? 200);
const ORDER_MS = Number(process.env.SOAK_ORDER_MS ?? 1000);
const MAX_GROWTH = Number(process.env.SOAK_MAX_GROWTH ?? 10);
const SAMPLE_MS = 5000;
const root = path.resolve(import.meta.dirname, "..");

/** Resident set size in MiB, from /proc (Linux). */
const rssMiB = (pid: number): number => procBytes(pid, "VmRSS") / 2 ** 20;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : 0;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function spawnBare(): Promise<ChildProcess & { port: number }> {
  const proc = spawn(process.execPath, [path.join(root, "scripts/bench/bare-server.ts")], {
    env: { ...process.env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve) =>
    proc.stdout!.once("data", (d: Buffer) => resolve(Object.assign(proc, { port: Number(d.toString()) }))),
  );
}

async function main() {
  const deps = await localDependencies();
  let failed = false;
  await withScratchStack("soak", async (stack, env) => {
    const bare = await spawnBare();
    const pids = new Map<string, number>([...stack.procs].map(([name, p]) => [name, p.pid!]));
    pids.set("bare node:http", bare.pid!);
    try {
      // Set-up: a key for the GET load, and people with credit for the orders (orders have a
      // cool-down of 30 per 15 minutes per person, so they take turns).
      const clients = adminClients(env);
      const { auth, billing } = clients;
      await auth.client.updateSettings({ hourlyRequestLimit: 1_000_000 });
      const product = (
        await billing.client.adminCreateProduct({
          name: "Soak VPS",
          kind: ProductKind.VPS,
          prices: [{ cycle: BillingCycle.MONTHLY, price: { currency: "EUR", amount: "1.0000" } }],
          vcpus: 1,
          memoryMb: 1024,
          diskGb: 20,
          location: "fra1",
          osImages: ["debian-12"],
          currency: "EUR",
        })
      ).product!;
      const people: string[] = [];
      const needed = Math.ceil((15 * 60_000) / ORDER_MS / 30) + 5;
      for (let i = 0; i < needed; i++) {
        const { key } = await fundedCustomer(clients, {
          name: `Soak ${i}`,
          email: `soak${i}@soak.test`,
          label: "soak",
          scopes: ["services", "orders", "billing"],
        });
        people.push(key);
      }
      auth.close();
      billing.close();

      // Idle: after start-up and set-up, before any load.
      await sleep(10_000);
      const idle = new Map([...pids].map(([name, pid]) => [name, rssMiB(pid)]));

      const durationMs = MINUTES * 60_000;
      const started = Date.now();
      const samples = new Map<string, { at: number; mib: number }[]>([...pids.keys()].map((n) => [n, []]));
      const sampler = setInterval(() => {
        for (const [name, pid] of pids)
          samples.get(name)!.push({ at: Date.now() - started, mib: rssMiB(pid) });
      }, SAMPLE_MS);

      let orders = 0;
      let orderErrors = 0;
      let stopOrders = false;
      const orderBody = JSON.stringify({ productId: product.id, billingCycle: "monthly" });
      const orderLoop = (async () => {
        for (let n = 0; !stopOrders; n++) {
          const next = started + (n + 1) * ORDER_MS;
          const res = await fetch(`${stack.gatewayUrl}/api/v1/orders`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${people[n % people.length]}`,
              "content-type": "application/json",
            },
            body: orderBody,
          }).catch(() => undefined);
          await res?.arrayBuffer();
          if (res?.status === 200 || res?.status === 201) orders++;
          else orderErrors++;
          await sleep(Math.max(0, next - Date.now()));
        }
      })();

      const load = await autocannon({
        url: `${stack.gatewayUrl}/api/v1/`,
        headers: { authorization: `Bearer ${people[0]}` },
        connections: 10,
        overallRate: RATE,
        duration: Math.round(durationMs / 1000),
      });
      stopOrders = true;
      await orderLoop;
      clearInterval(sampler);

      const rows = [...pids.keys()].map((name) => {
        const xs = samples.get(name)!;
        const warm = median(
          xs.filter((x) => x.at >= durationMs * 0.1 && x.at < durationMs * 0.2).map((x) => x.mib),
        );
        const end = median(xs.filter((x) => x.at >= durationMs * 0.9).map((x) => x.mib));
        const peak = Math.max(...xs.map((x) => x.mib));
        const growth = warm ? ((end - warm) / warm) * 100 : 0;
        return { name, idle: idle.get(name)!, warm, end, peak, growth };
      });
      const f = (x: number) => x.toFixed(1);
      const lines = [
        `Soak: ${MINUTES} min, keyed GET /api/v1/ at ${RATE}/s offered (${Math.round(load.requests.average)}/s served, ` +
          `p50 ${load.latency.p50} ms, p99 ${load.latency.p99} ms, ${load.non2xx} non-2xx, ${load.errors + load.timeouts} errors), ` +
          `${orders} orders settled from credit (${orderErrors} refused or failed); ` +
          `Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), load average at the end ${os
            .loadavg()
            .map((x) => x.toFixed(1))
            .join(" ")}.`,
        "",
        "| Process | Idle RSS (MiB) | Warmed up (MiB) | End (MiB) | Peak (MiB) | Growth |",
        "|---|---:|---:|---:|---:|---:|",
        ...rows.map(
          (r) =>
            `| ${r.name} | ${f(r.idle)} | ${f(r.warm)} | ${f(r.end)} | ${f(r.peak)} | ${r.growth.toFixed(1)}% |`,
        ),
      ];
      process.stdout.write(`${lines.join("\n")}\n`);
      const grew = rows.filter((r) => r.name !== "bare node:http" && r.growth > MAX_GROWTH);
      if (grew.length) {
        failed = true;
        process.stderr.write(`Grew more than ${MAX_GROWTH}%: ${grew.map((r) => r.name).join(", ")}\n`);
      }
    } finally {
      bare.kill("SIGTERM");
    }
  }).finally(() => deps.stop());
  process.exit(failed ? 1 : 0);
}

await main();
