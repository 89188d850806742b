import path from "node:path";
import { AuthService } from "@hb/contracts/auth/v1/auth_pb";
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
} from "@hb/platform";
import { createAccounts } from "./accounts.ts";
import { createApiKeys } from "./api-keys.ts";
import { loadAuthConfig } from "./config.ts";
import { createPartners } from "./partners.ts";
import { startRequestLogConsumer, startRequestLogPurge } from "./request-log.ts";
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
  const purge = startRequestLogPurge(sql, cfg.REQUEST_LOG_RETENTION_DAYS, log);
  log.info("auth listening", { port: server.port, transport: cfg.RPC_TRANSPORT });

  onShutdown(log, [
    ["rpc", () => server.close()],
    ["request-log", () => consumer.stop()],
    ["purge", () => purge.stop()],
    ["nats", () => nc.drain()],
    ["redis", () => redis.quit()],
    ["db", () => sql.end({ timeout: 5 })],
  ]);
});
