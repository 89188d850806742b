import path from "node:path";
import { AccountLookupService } from "@hb/contracts/hb/auth/v1/account_lookup_pb";
import { BillingDeskService } from "@hb/contracts/hb/billing/v1/billing_desk_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import {
  PaymentEventService,
  TopUpService,
  TopUpStaffService,
} from "@hb/contracts/hb/billing/v1/payments_pb";
import { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import {
  bind,
  connectDb,
  createLogger,
  linkNats,
  listenPort,
  loadTlsIdentity,
  migrate,
  onShutdown,
  rpcClient,
  runMain,
  serveRpc,
  startObservability,
  startOutboxRelay,
  startRetention,
} from "@hb/platform";
import { createAccount } from "./account.ts";
import { accountLookup } from "./account-lookup.ts";
import { createAddons } from "./addons.ts";
import { createCatalogue } from "./catalogue.ts";
import { startClock } from "./clock.ts";
import { loadBillingConfig } from "./config.ts";
import { createDesk } from "./desk.ts";
import { createDeskSearch } from "./desk-search.ts";
import { createDeskService } from "./desk-service.ts";
import { createDocumentHandlers } from "./document-handlers.ts";
import { createClockAdmin, startDueWork } from "./due.ts";
import type { BillingHandlers } from "./handlers.ts";
import { createOrders } from "./orders.ts";
import { createPayments } from "./payments/wiring.ts";
import { provisioningHandOver, startMachineEventConsumer, startProvisioner } from "./provisioning.ts";
import { createReseller } from "./reseller.ts";
import { createServiceHandlers } from "./service-handlers.ts";
import { withRecordHandOver } from "./service-records.ts";
import { createSettingsHandlers } from "./settings-handlers.ts";
import { createUpgrades } from "./upgrades.ts";

const log = createLogger("billing");

runMain(log, async () => {
  const cfg = loadBillingConfig();
  const observability = await startObservability("billing", log);
  const sql = connectDb(
    cfg.DATABASE_URL,
    "billing",
    cfg.DB_POOL_MAX,
    cfg.DB_IDLE_TIMEOUT_S,
    cfg.DATABASE_SOCKET_DIR,
  );
  await migrate(sql, "billing", path.join(import.meta.dirname, "db/migrations"), log);
  await startClock(sql, cfg.BILLING_CLOCK_CONTROL, log);
  // Not awaited: the service serves while NATS is down; what needs NATS waits for it.
  // No stack captured per request: the relay publishes every event as one (platform nats.ts).
  const nats = linkNats(cfg.NATS_URL, "billing", cfg.HB_NS, log, { asyncTraces: false });
  const tls = loadTlsIdentity(cfg);
  const compute = rpcClient(cfg.RPC_TRANSPORT, ComputeProvisioningService, cfg.COMPUTE_ADDR, {
    timeoutMs: cfg.RPC_TIMEOUT_MS,
    tls,
  });

  // Auth's account facts for the staff operations (AccountLookupService, billing's alone).
  const auth = rpcClient(cfg.RPC_TRANSPORT, AccountLookupService, cfg.AUTH_ADDR, {
    timeoutMs: cfg.RPC_TIMEOUT_MS,
    tls,
  });
  const accounts = accountLookup(auth.client);

  // An order's records and builds go to compute in one call before its answer (provisioning.ts).
  const handOver = provisioningHandOver(sql, cfg.HB_NS, compute.client, log, cfg.PROVISIONER_INTERVAL_MS);
  // Every call's service records reach compute before its answer does (service-records.ts).
  const impl: BillingHandlers = withRecordHandOver(
    {
      ...createAccount(sql, accounts),
      ...createCatalogue(sql),
      ...createServiceHandlers(sql, cfg.HB_NS, accounts),
      ...createOrders(sql, cfg.HB_NS, handOver),
      ...createDocumentHandlers(sql, cfg.HB_NS),
      ...createReseller(sql, cfg.HB_NS),
      ...createAddons(sql, cfg.HB_NS),
      ...createUpgrades(sql, cfg.HB_NS),
      // A test hook: AdminAdvanceClock exists only in a process started with clock control.
      ...(cfg.BILLING_CLOCK_CONTROL ? createClockAdmin(sql, cfg.HB_NS, cfg.DUE_CATCH_UP_STEPS) : {}),
      ...createSettingsHandlers(sql),
      ...createDesk(sql, accounts),
      ...createDeskSearch(sql),
      ...createDeskService(sql),
    },
    sql,
    compute.client,
    log,
  );
  const payments = withRecordHandOver(createPayments(sql, cfg, log, accounts), sql, compute.client, log);
  const server = await serveRpc(
    cfg.RPC_TRANSPORT,
    listenPort(cfg.BILLING_ADDR),
    [
      // PayDocuments and CreateOrders carry the calls the gateway coalesces (docs/architecture.md,
      // "Coalesced calls").
      bind(BillingService, impl, { payDocuments: "payDocument", createOrders: "createOrder" }),
      bind(BillingStaffService, impl),
      bind(BillingDeskService, impl),
      bind(TopUpService, payments),
      bind(TopUpStaffService, payments),
      bind(PaymentEventService, payments),
    ],
    log,
    tls,
    cfg.HEALTH_PORT,
  );
  const relay = startOutboxRelay(sql, nats, log);
  const provisioner = startProvisioner(
    sql,
    cfg.HB_NS,
    compute.client,
    log,
    cfg.PROVISIONER_INTERVAL_MS,
    handOver,
  );
  const machines = startMachineEventConsumer(sql, nats, cfg.HB_NS, log);
  const due = startDueWork(sql, cfg.HB_NS, log, cfg.HOURLY_CHARGE_INTERVAL_MS, cfg.DUE_CATCH_UP_STEPS);
  // Tables that only grow keep 30 days, like every other record.
  const retention = startRetention(
    sql,
    [
      { table: "processed_events", column: "processed_at" },
      { table: "idempotency", column: "created_at" },
      { table: "outbox", column: "published_at" },
    ],
    log,
  );
  log.info("billing listening", { port: server.port, transport: cfg.RPC_TRANSPORT });

  onShutdown(log, [
    ["rpc", () => server.close()],
    ["provisioner", () => provisioner.stop()],
    ["due-work", () => due.stop()],
    ["retention", () => retention.stop()],
    ["machine-events", () => machines.stop()],
    ["outbox", () => relay.stop()],
    ["nats", () => nats.close()],
    ["compute-client", () => compute.close()],
    ["auth-client", () => auth.close()],
    ["db", () => sql.end({ timeout: 5 })],
    // Last: spans and metrics of the shutdown itself are still sent.
    ["observability", () => observability.close()],
  ]);
});
