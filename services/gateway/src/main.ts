import type http from "node:http";
import net from "node:net";
import os from "node:os";
import { createLogger, linkNats, onShutdown, runMain, startObservability } from "@hb/platform";
import { connectRedis } from "@hb/platform/redis";
import { buildApp } from "./app.ts";
import { authThrottleScripts, createAuthThrottle } from "./auth-throttle.ts";
import { createClients } from "./clients.ts";
import { loadGatewayConfig } from "./config.ts";
import { consoleSockets } from "./console/socket.ts";
import { consoleTickets } from "./console/tickets.ts";
import { startKeySync } from "./key-sync.ts";
import { createRequestLogPublisher, jetStreamBatchPublisher } from "./request-log.ts";
import { allRoutes } from "./routes/index.ts";
import { createGatewayServer } from "./server.ts";

const log = createLogger("gateway");

runMain(log, async () => {
  const cfg = loadGatewayConfig();
  const observability = await startObservability("gateway", log);
  const clients = createClients(cfg);
  const redis = connectRedis(cfg.REDIS_URL, authThrottleScripts);
  // Not awaited: the gateway serves while NATS is down; request-log entries wait in the buffer.
  const nats = linkNats(cfg.NATS_URL, "gateway", cfg.HB_NS, log);
  const keys = cfg.KEY_TABLE
    ? startKeySync(clients.keys, `${os.hostname()}/${process.pid}`, log, cfg.KEY_SNAPSHOT_CHUNK)
    : undefined;
  const tickets = consoleTickets(redis, cfg.HB_NS, cfg.CONSOLE_TICKET_TTL_S);
  const requestLog = createRequestLogPublisher(jetStreamBatchPublisher(nats, cfg.HB_NS), log);
  const app = buildApp({
    cfg,
    clients,
    redis,
    log,
    routes: allRoutes(cfg.PUBLIC_URL, {
      streamHeartbeatMs: cfg.STREAM_HEARTBEAT_MS,
      consoleTickets: tickets,
    }),
    requestLog,
    authThrottle: createAuthThrottle(
      redis,
      cfg.HB_NS,
      {
        freeFailures: cfg.AUTH_FAILURES_FREE,
        windowMs: cfg.AUTH_FAILURE_WINDOW_S * 1000,
        baseDelayMs: cfg.AUTH_FAILURE_DELAY_MS,
        maxDelayMs: cfg.AUTH_FAILURE_MAX_DELAY_MS,
      },
      log,
    ),
    keys,
    degraded: () => (nats.connected() ? [] : ["nats"]),
  });
  const server = createGatewayServer(app, {
    headersTimeoutMs: cfg.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: cfg.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: cfg.KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: cfg.MAX_CONNECTIONS,
  });
  // While draining, every answer asks the client to close its keep-alive connection, so requests
  // already on their way are served and no new ones arrive on old connections.
  let draining = false;
  server.on("request", (_req, res: http.ServerResponse) => {
    if (draining) res.setHeader("Connection", "close");
  });
  // WebSockets: the web console's (console/socket.ts) is the only one; any other upgrade is dropped.
  const consoles = consoleSockets({
    clients,
    tickets,
    publicUrl: cfg.PUBLIC_URL,
    log,
    sessionCheckMs: cfg.CONSOLE_SESSION_CHECK_MS,
    keys,
  });
  server.on("upgrade", (req, socket, head) => {
    if (draining || !consoles.handle(req, socket, head)) socket.destroy();
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
    ["consoles", async () => consoles.close()],
    ["request-log", () => requestLog.flush()],
    ["key-table", () => keys?.close()],
    ["nats", () => nats.close()],
    ["redis", () => redis.quit()],
    ["clients", () => clients.close()],
    // Last: spans and metrics of the shutdown itself are still sent.
    ["observability", () => observability.close()],
  ]);
});
