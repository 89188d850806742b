import http from "node:http";
import net from "node:net";
import { connectNats, connectRedis, createLogger, ensureStreams, onShutdown, runMain } from "@hb/platform";
import { buildApp } from "./app.ts";
import { createClients } from "./clients.ts";
import { loadGatewayConfig } from "./config.ts";
import { createRequestLogPublisher, jetStreamBatchPublisher } from "./request-log.ts";
import { allRoutes } from "./routes/index.ts";

const log = createLogger("gateway");

runMain(log, async () => {
  const cfg = loadGatewayConfig();
  const clients = createClients(cfg);
  const redis = connectRedis(cfg.REDIS_URL);
  const nc = await connectNats(cfg.NATS_URL, "gateway");
  await ensureStreams(nc, cfg.HB_NS);
  const requestLog = createRequestLogPublisher(jetStreamBatchPublisher(nc, cfg.HB_NS), log);
  const app = buildApp({
    cfg,
    clients,
    redis,
    log,
    routes: allRoutes(cfg.PUBLIC_URL),
    requestLog,
  });
  const server = http.createServer({ keepAliveTimeout: 65_000 }, app);
  // While draining, every answer asks the client to close its keep-alive connection, so requests
  // already on their way are served and no new ones arrive on old connections.
  let draining = false;
  server.on("request", (_req, res: http.ServerResponse) => {
    if (draining) res.setHeader("Connection", "close");
  });
  await new Promise<void>((resolve) => server.listen(cfg.PORT, cfg.HOST, resolve));
  log.info("gateway listening", { port: cfg.PORT });

  onShutdown(log, [
    [
      "http",
      () =>
        new Promise<void>((resolve) => {
          draining = true;
          // http.Server.close() also drops idle keep-alive connections at once, racing requests
          // already sent on them; stop listening only, and close idle connections a moment later.
          net.Server.prototype.close.call(server, () => resolve());
          const idle = setTimeout(() => server.closeIdleConnections(), 1000);
          const force = setTimeout(() => server.closeAllConnections(), 10_000);
          server.once("close", () => {
            clearTimeout(idle);
            clearTimeout(force);
          });
        }),
    ],
    ["request-log", () => requestLog.flush()],
    ["nats", () => nc.drain()],
    ["redis", () => redis.quit()],
    ["clients", () => clients.close()],
  ]);
});
