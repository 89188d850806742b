import path from "node:path";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import {
  bind,
  commonConfig,
  connectDb,
  connectNats,
  createLogger,
  ensureStreams,
  listenPort,
  loadConfig,
  migrate,
  onShutdown,
  runMain,
  serveRpc,
  startOutboxRelay,
  startRetention,
} from "@hb/platform";
import { z } from "zod";
import { createHandlers } from "./handlers.ts";
import { createJobs } from "./jobs.ts";
import { startServiceEventConsumer } from "./service-events.ts";
import { createSimulatorDriver } from "./simulator.ts";

const log = createLogger("compute");

runMain(log, async () => {
  const cfg = loadConfig({
    ...commonConfig,
    /** Simulator timings: how long a build, a power action and a reinstall take. */
    SIM_BUILD_MS: z.coerce.number().int().min(0).default(3000),
    SIM_ACTION_MS: z.coerce.number().int().min(0).default(1500),
    SIM_REINSTALL_MS: z.coerce.number().int().min(0).default(5000),
  });
  const sql = connectDb(cfg.DATABASE_URL, "compute", cfg.DB_POOL_MAX);
  await migrate(sql, "compute", path.join(import.meta.dirname, "db/migrations"), log);
  const nc = await connectNats(cfg.NATS_URL, "compute");
  await ensureStreams(nc, cfg.HB_NS);
  // Provider drivers by the machines.provider name they serve (docs/providers.md).
  const drivers = {
    simulator: createSimulatorDriver({
      buildMs: cfg.SIM_BUILD_MS,
      actionMs: cfg.SIM_ACTION_MS,
      reinstallMs: cfg.SIM_REINSTALL_MS,
    }),
  };
  const jobs = createJobs(sql, cfg.HB_NS, drivers);
  const deps = { jobs, drivers, defaultProvider: "simulator" };
  const server = await serveRpc(
    cfg.RPC_TRANSPORT,
    listenPort(cfg.COMPUTE_ADDR),
    [bind(ComputeService, createHandlers(sql, deps))],
    log,
  );
  const relay = startOutboxRelay(sql, nc, log);
  const jobLoop = jobs.startLoop(log);
  const events = await startServiceEventConsumer(sql, nc, cfg.HB_NS, log);
  // Finished jobs answer GET /jobs/{id} for 30 days; event ids need keeping no longer either.
  const retention = startRetention(
    sql,
    [
      { table: "jobs", column: "finished_at" },
      { table: "processed_events", column: "processed_at" },
    ],
    log,
  );
  log.info("compute listening", { port: server.port, transport: cfg.RPC_TRANSPORT });

  onShutdown(log, [
    ["rpc", () => server.close()],
    ["job-loop", () => jobLoop.stop()],
    ["retention", () => retention.stop()],
    ["service-events", () => events.stop()],
    ["outbox", () => relay.stop()],
    ["nats", () => nc.drain()],
    ["db", () => sql.end({ timeout: 5 })],
  ]);
});
