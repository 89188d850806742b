import path from "node:path";
import { AccountLookupService } from "@hb/contracts/hb/auth/v1/account_lookup_pb";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { KeyDistributionService } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import { PartnerLookupService } from "@hb/contracts/hb/auth/v1/partner_lookup_pb";
import { PortalService } from "@hb/contracts/hb/auth/v1/portal_pb";
import {
  bind,
  connectDb,
  createLogger,
  linkNats,
  listenPort,
  loadTlsIdentity,
  migrate,
  onShutdown,
  runMain,
  serveRpc,
  startObservability,
  startRetention,
} from "@hb/platform";
import { connectRedis } from "@hb/platform/redis";
import { createAccounts } from "./accounts.ts";
import { createApiKeys } from "./api-keys.ts";
import { loadAuthConfig } from "./config.ts";
import type { AuthHandlers } from "./handlers.ts";
import { createKeyDistribution } from "./key-distribution.ts";
import { keyLeaseScripts } from "./key-leases.ts";
import { timedVerify } from "./metrics.ts";
import { createPartners } from "./partners.ts";
import { createPeopleSearch } from "./people-search.ts";
import { createPortal, signInScripts } from "./portal.ts";
import { startRequestLogConsumer } from "./request-log.ts";
import { createStaffAudit } from "./staff-audit.ts";
import { createVerify } from "./verify.ts";

const log = createLogger("auth");

runMain(log, async () => {
  const cfg = loadAuthConfig();
  const observability = await startObservability("auth", log);
  const sql = connectDb(
    cfg.DATABASE_URL,
    "auth",
    cfg.DB_POOL_MAX,
    cfg.DB_IDLE_TIMEOUT_S,
    cfg.DATABASE_SOCKET_DIR,
  );
  await migrate(sql, "auth", path.join(import.meta.dirname, "db/migrations"), log);
  const redis = connectRedis(cfg.REDIS_URL, { ...keyLeaseScripts, ...signInScripts });
  // Not awaited: the service serves while NATS is down; what needs NATS waits for it.
  const nats = linkNats(cfg.NATS_URL, "auth", cfg.HB_NS, log);

  const keyTable = createKeyDistribution(
    sql,
    redis,
    cfg.HB_NS,
    { leaseMs: cfg.KEY_LEASE_MS, heartbeatMs: cfg.KEY_HEARTBEAT_MS, ackWaitMs: cfg.KEY_ACK_WAIT_MS },
    log,
  );
  const verify = timedVerify(createVerify(sql, redis, cfg.HB_NS, cfg.KEY_PEPPER));
  const impl: AuthHandlers = {
    verify: (req: Parameters<typeof verify>[0]) => verify(req),
    ...createAccounts(sql, keyTable.changes),
    ...createApiKeys(sql, cfg.KEY_PEPPER, keyTable.changes),
    ...createPartners(sql),
    ...createStaffAudit(sql),
    ...createPeopleSearch(sql),
  };
  const server = await serveRpc(
    cfg.RPC_TRANSPORT,
    listenPort(cfg.AUTH_ADDR),
    [
      bind(AuthService, impl),
      bind(AuthStaffService, impl),
      bind(PartnerLookupService, impl),
      bind(AccountLookupService, impl),
      bind(KeyDistributionService, keyTable.service),
      bind(
        PortalService,
        createPortal(
          sql,
          redis,
          cfg.HB_NS,
          {
            maxFailures: cfg.SIGN_IN_MAX_FAILURES,
            lockSeconds: cfg.SIGN_IN_LOCK_SECONDS,
            sourceMaxFailures: cfg.SIGN_IN_SOURCE_MAX_FAILURES,
            sourceWindowSeconds: cfg.SIGN_IN_SOURCE_WINDOW_SECONDS,
            sourceConcurrency: cfg.SIGN_IN_SOURCE_CONCURRENCY,
            sessionSeconds: cfg.SESSION_SECONDS,
            linkHours: cfg.PASSWORD_LINK_HOURS,
            passwordCost: cfg.PASSWORD_HASH_COST,
          },
          keyTable.changes,
        ),
      ),
    ],
    log,
    loadTlsIdentity(cfg),
    cfg.HEALTH_PORT,
  );
  const consumer = startRequestLogConsumer(sql, nats, cfg.HB_NS, log);
  // The request log is auth's only table that only grows; customers, people, keys and partners
  // are records the portal manages.
  const retention = startRetention(
    sql,
    [
      { table: "request_log", column: "at" },
      { table: "password_links", column: "created_at" },
    ],
    log,
    {
      maxAgeDays: cfg.REQUEST_LOG_RETENTION_DAYS,
    },
  );
  log.info("auth listening", { port: server.port, transport: cfg.RPC_TRANSPORT });

  onShutdown(log, [
    ["rpc", () => server.close()],
    ["key-table", () => keyTable.close()],
    ["request-log", () => consumer.stop()],
    ["retention", () => retention.stop()],
    ["nats", () => nats.close()],
    ["redis", () => redis.quit()],
    ["db", () => sql.end({ timeout: 5 })],
    // Last: spans and metrics of the shutdown itself are still sent.
    ["observability", () => observability.close()],
  ]);
});
