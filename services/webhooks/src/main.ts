import path from "node:path";
import { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
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
  rpcClient,
  runMain,
  serveRpc,
  startObservability,
  startRetention,
} from "@hb/platform";
import { z } from "zod";
import { createEventStream } from "./event-stream.ts";
import { startEventsConsumer, storedThrough } from "./events-consumer.ts";
import { createHandlers } from "./handlers.ts";
import { registerQueueDepth } from "./metrics.ts";
import { startPassLoop } from "./pass.ts";

const log = createLogger("webhooks");

runMain(log, async () => {
  const cfg = loadConfig({
    ...commonConfig,
    /**
     * How often partners are looked at when nothing wakes the loop (events arriving do): what it
     * waits for is a delivery coming due after back-off. Once a minute.
     */
    WEBHOOK_PASS_INTERVAL_MS: z.coerce.number().int().min(100).default(60_000),
    /** Success means a 2xx within this deadline. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
    /** Attempts per partner per lease held before it goes behind the others. */
    WEBHOOK_PER_PARTNER: z.coerce.number().int().min(1).default(100),
    /** Partners served at once by one replica. */
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).default(128),
    /** Event streams (`hb webhooks listen`) one partner may hold open at once on a replica. */
    WEBHOOK_STREAMS_PER_PARTNER: z.coerce.number().int().min(1).max(100).default(5),
  });
  const observability = await startObservability("webhooks", log);
  const sql = connectDb(
    cfg.DATABASE_URL,
    "webhooks",
    cfg.DB_POOL_MAX,
    cfg.DB_IDLE_TIMEOUT_S,
    cfg.DATABASE_SOCKET_DIR,
  );
  await migrate(sql, "webhooks", path.join(import.meta.dirname, "db/migrations"), log);
  registerQueueDepth(sql);
  // Not awaited: the service serves while NATS is down; what needs NATS waits for it.
  const nats = linkNats(cfg.NATS_URL, "webhooks", cfg.HB_NS, log);
  const tls = loadTlsIdentity(cfg);
  const auth = rpcClient(cfg.RPC_TRANSPORT, PartnerLookupService, cfg.AUTH_ADDR, {
    timeoutMs: cfg.RPC_TIMEOUT_MS,
    tls,
  });
  const opts = {
    timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
    perPartner: cfg.WEBHOOK_PER_PARTNER,
    concurrency: cfg.WEBHOOK_CONCURRENCY,
    storedThrough: storedThrough(nats, cfg.HB_NS),
  };
  const handlers = createHandlers(sql, auth.client, log, opts);
  const streamEvents = createEventStream({
    nats,
    ns: cfg.HB_NS,
    auth: auth.client,
    perPartner: cfg.WEBHOOK_STREAMS_PER_PARTNER,
  });
  const server = await serveRpc(
    cfg.RPC_TRANSPORT,
    listenPort(cfg.WEBHOOKS_ADDR),
    [bind(WebhooksService, { ...handlers, streamEvents }), bind(WebhooksStaffService, handlers)],
    log,
    tls,
    cfg.HEALTH_PORT,
  );
  const pass = startPassLoop(sql, auth.client, log, cfg.WEBHOOK_PASS_INTERVAL_MS, opts);
  const consumer = startEventsConsumer(sql, nats, cfg.HB_NS, log, pass.stored);
  // Delivery records are kept 30 days. Events need no table of their own: a delivery's unique
  // event id is what makes a redelivered event a no-op.
  const retention = startRetention(sql, [{ table: "deliveries", column: "created_at" }], log);
  log.info("webhooks listening", { port: server.port, transport: cfg.RPC_TRANSPORT });

  onShutdown(log, [
    ["rpc", () => server.close()],
    ["pass", () => pass.stop()],
    ["retention", () => retention.stop()],
    ["events", () => consumer.stop()],
    ["nats", () => nats.close()],
    ["auth-client", () => auth.close()],
    ["db", () => sql.end({ timeout: 5 })],
    // Last: spans and metrics of the shutdown itself are still sent.
    ["observability", () => observability.close()],
  ]);
});
