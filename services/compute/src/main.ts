import path from "node:path";
import { ComputeService } from "@hb/contracts/compute/v1/compute_pb";
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
} from "@hb/platform";
import { z } from "zod";
import { createCopies } from "./copies.ts";
import { createHandlers } from "./handlers.ts";
import { startServiceEventConsumer } from "./service-events.ts";
import { startJobPurge, startSimulator } from "./simulator.ts";

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
  const sim = { buildMs: cfg.SIM_BUILD_MS, actionMs: cfg.SIM_ACTION_MS, reinstallMs: cfg.SIM_REINSTALL_MS };
  const server = await serveRpc(
    cfg.RPC_TRANSPORT,
    listenPort(cfg.COMPUTE_ADDR),
    [bind(ComputeService, { ...createHandlers(sql, sim), ...createCopies(sql, sim) })],
    log,
  );
  const relay = startOutboxRelay(sql, nc, log);
  const simulator = startSimulator(sql, cfg.HB_NS, log);
  const events = await startServiceEventConsumer(sql, nc, cfg.HB_NS, log);
  const purge = startJobPurge(sql, log);
  log.info("compute listening", { port: server.port, transport: cfg.RPC_TRANSPORT });

  onShutdown(log, [
    ["rpc", () => server.close()],
    ["simulator", () => simulator.stop()],
    ["job-purge", () => purge.stop()],
    ["service-events", () => events.stop()],
    ["outbox", () => relay.stop()],
    ["nats", () => nc.drain()],
    ["db", () => sql.end({ timeout: 5 })],
  ]);
});
