import path from "node:path";
import { ComputeDeskService } from "@hb/contracts/hb/compute/v1/compute_desk_pb";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { ComputeStaffService } from "@hb/contracts/hb/compute/v1/compute_staff_pb";
import { ComputeConsoleService } from "@hb/contracts/hb/compute/v1/console_pb";
import { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import {
  bind,
  commonConfig,
  connectDb,
  createLogger,
  linkNats,
  listenPort,
  loadConfig,
  loadTlsIdentity,
  migrate,
  onShutdown,
  runMain,
  serveRpc,
  startObservability,
  startOutboxRelay,
  startRetention,
  testSwitches,
} from "@hb/platform";
import { z } from "zod";
import { createConsoles } from "./console/consoles.ts";
import type { Drivers } from "./driver.ts";
import { createHandlers } from "./handlers.ts";
import { createJobs } from "./jobs.ts";
import { lxdClients, lxdConfig, lxdDriverFromEnv } from "./lxd/config.ts";
import { createReconciler } from "./lxd/reconcile.ts";
import { startServiceEventConsumer } from "./service-events.ts";
import { createSimulatorDriver } from "./simulator.ts";
import { startUsageSampler } from "./usage-sampler.ts";

const log = createLogger("compute");

runMain(log, async () => {
  const cfg = loadConfig({
    ...commonConfig,
    /** Simulator timings: how long a build, a power action and a reinstall take. */
    SIM_BUILD_MS: z.coerce.number().int().min(0).default(3000),
    SIM_ACTION_MS: z.coerce.number().int().min(0).default(1500),
    SIM_REINSTALL_MS: z.coerce.number().int().min(0).default(5000),
    /** The simulator's failure injection by hostname: on only where a test stack sets it. */
    SIM_FAILURES: testSwitches.SIM_FAILURES.schema,
    /** The most machines each provider may hold (with an instance or being built); 0: no maximum. */
    COMPUTE_MAX_MACHINES: z.coerce.number().int().min(0).default(0),
    /** How often each machine's usage is read into its history (docs/architecture.md, "Usage history"). */
    USAGE_SAMPLE_MS: z.coerce.number().int().min(100).default(60_000),
    ...lxdConfig,
  });
  const observability = await startObservability("compute", log);
  const sql = connectDb(
    cfg.DATABASE_URL,
    "compute",
    cfg.DB_POOL_MAX,
    cfg.DB_IDLE_TIMEOUT_S,
    cfg.DATABASE_SOCKET_DIR,
  );
  await migrate(sql, "compute", path.join(import.meta.dirname, "db/migrations"), log);
  // Not awaited: the service serves while NATS is down; what needs NATS waits for it.
  const nats = linkNats(cfg.NATS_URL, "compute", cfg.HB_NS, log);
  // Provider drivers by the machines.provider name they serve (docs/providers.md).
  // Dedicated and game servers stay on the simulator; VPSes go to LXD when COMPUTE_DRIVER=lxd.
  const drivers: Drivers = {
    simulator: createSimulatorDriver({
      buildMs: cfg.SIM_BUILD_MS,
      actionMs: cfg.SIM_ACTION_MS,
      reinstallMs: cfg.SIM_REINSTALL_MS,
      failureInjection: cfg.SIM_FAILURES,
    }),
  };
  const clients = cfg.COMPUTE_DRIVER === "lxd" ? await lxdClients(cfg) : [];
  if (cfg.COMPUTE_DRIVER === "lxd") drivers.lxd = lxdDriverFromEnv(sql, cfg, clients);
  const jobs = createJobs(sql, cfg.HB_NS, drivers);
  const deps = {
    jobs,
    drivers,
    defaultProvider: "simulator",
    vpsProvider: cfg.COMPUTE_DRIVER,
    maxMachines: cfg.COMPUTE_MAX_MACHINES,
  };
  const handlers = createHandlers(sql, deps);
  const consoles = createConsoles(sql, drivers, log);
  const server = await serveRpc(
    cfg.RPC_TRANSPORT,
    listenPort(cfg.COMPUTE_ADDR),
    [
      bind(ComputeService, handlers),
      bind(ComputeProvisioningService, handlers),
      bind(ComputeStaffService, handlers),
      bind(ComputeDeskService, handlers),
      bind(ComputeConsoleService, consoles.handlers),
    ],
    log,
    loadTlsIdentity(cfg),
    cfg.HEALTH_PORT,
  );
  const relay = startOutboxRelay(sql, nats, log);
  const jobLoop = jobs.startLoop(log);
  const usage = startUsageSampler(sql, drivers, log, cfg.USAGE_SAMPLE_MS);
  const events = startServiceEventConsumer(sql, nats, cfg.HB_NS, log, jobs, (changes) => {
    for (const { serviceId, status } of changes)
      if (status === "suspended" || status === "terminated") consoles.closeServices([serviceId], status);
  });
  const reconcile =
    clients.length > 0 ? createReconciler(sql, clients, log).start(cfg.LXD_RECONCILE_MS) : undefined;
  // Finished jobs answer GET /jobs/{id} for 30 days; event ids need keeping no longer either.
  const retention = startRetention(
    sql,
    [
      { table: "jobs", column: "finished_at" },
      { table: "processed_events", column: "processed_at" },
      { table: "outbox", column: "published_at" },
    ],
    log,
  );
  log.info("compute listening", {
    port: server.port,
    transport: cfg.RPC_TRANSPORT,
    vpsDriver: cfg.COMPUTE_DRIVER,
  });

  onShutdown(log, [
    ["consoles", async () => consoles.stop()],
    ["rpc", () => server.close()],
    ["job-loop", () => jobLoop.stop()],
    ["reconcile", async () => reconcile?.stop()],
    ["usage-sampler", () => usage.stop()],
    ["retention", () => retention.stop()],
    ["service-events", () => events.stop()],
    ["outbox", () => relay.stop()],
    ["nats", () => nats.close()],
    ["db", () => sql.end({ timeout: 5 })],
    // Last: spans and metrics of the shutdown itself are still sent.
    ["observability", () => observability.close()],
  ]);
});
