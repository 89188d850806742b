import http from "node:http";
import { connectNats, connectRedis, createLogger, ensureStreams, onShutdown, runMain } from "@hb/platform";
import { buildApp } from "./app.ts";
import { createClients } from "./clients.ts";
import { loadGatewayConfig } from "./config.ts";
import { createRequestLogPublisher } from "./request-log.ts";
import { allRoutes } from "./routes/index.ts";

const log = createLogger("gateway");

runMain(log, async () => {
  const cfg = loadGatewayConfig();
  const clients = createClients(cfg);
  const redis = connectRedis(cfg.REDIS_URL);
  const nc = await connectNats(cfg.NATS_URL, "gateway");
  await ensureStreams(nc, cfg.HB_NS);
  const app = buildApp({
    cfg,
    clients,
    redis,
    log,
    routes: allRoutes(cfg.PUBLIC_URL),
    requestLog: createRequestLogPublisher(nc, cfg.HB_NS, log),
  });
  const server = http.createServer({ keepAliveTimeout: 65_000 }, app);
  await new Promise<void>((resolve) => server.listen(cfg.PORT, cfg.HOST, resolve));
  log.info("gateway listening", { port: cfg.PORT });

  onShutdown(log, [
    [
      "http",
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
    ],
    ["nats", () => nc.drain()],
    ["redis", () => redis.quit()],
    ["clients", () => clients.close()],
  ]);
});
