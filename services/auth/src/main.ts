import path from "node:path";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import {
  bind,
  connectDb,
  connectNats,
  connectRedis,
  createLogger,
  ensureStreams,
  listenPort,
  migrate,
  onShutdown,
  runMain,
  serveRpc,
  startRetention,
} from "@hb/platform";
import { createAccounts } from "./accounts.ts";
import { createApiKeys } from "./api-keys.ts";
import { loadAuthConfig } from "./config.ts";
import { createPartners } from "./partners.ts";
import { startRequestLogConsumer } from "./request-log.ts";
import { createVerify } from "./verify.ts";

const log = createLogger("auth");

runMain(log, async () => {
  const cfg = loadAuthConfig();
  const sql = connectDb(cfg.DATABASE_URL, "auth", cfg.DB_POOL_MAX);
  await migrate(sql, "auth", path.join(import.meta.dirname, "db/migrations"), log);
  const redis = connectRedis(cfg.REDIS_URL);
  const nc = await connectNats(cfg.NATS_URL, "auth");
  await ensureStreams(nc, cfg.HB_NS);

  const verify = createVerify(sql, redis, cfg.HB_NS, cfg.KEY_PEPPER);
  const impl = {
    verify: (req: Parameters<typeof verify>[0]) => verify(req),
    ...createAccounts(sql),
    ...createApiKeys(sql, cfg.KEY_PEPPER),
    ...createPartners(sql),
  };
  const server = await serveRpc(cfg.RPC_TRANSPORT, listenPort(cfg.AUTH_ADDR), [bind(AuthService, impl)], log);
  const consumer = await startRequestLogConsumer(sql, nc, cfg.HB_NS, log);
  // The request log is auth's only table that only grows; customers, people, keys and partners
  // are records the portal manages.
  const retention = startRetention(sql, [{ table: "request_log", column: "at" }], log, {
    maxAgeDays: cfg.REQUEST_LOG_RETENTION_DAYS,
  });
  log.info("auth listening", { port: server.port, transport: cfg.RPC_TRANSPORT });

  onShutdown(log, [
    ["rpc", () => server.close()],
    ["request-log", () => consumer.stop()],
    ["retention", () => retention.stop()],
    ["nats", () => nc.drain()],
    ["redis", () => redis.quit()],
    ["db", () => sql.end({ timeout: 5 })],
  ]);
});
