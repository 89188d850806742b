import type { ConsoleTickets } from "../console/tickets.ts";
import type { RouteDef } from "../route.ts";
import { accountRoutes } from "./account.ts";
import { addonUpgradeRoutes } from "./addons-upgrades.ts";
import { consoleRoute } from "./console.ts";
import { dedicatedRoutes } from "./dedicated.ts";
import { documentRoutesAll } from "./documents.ts";
import { jobRoutes } from "./jobs.ts";
import { backupRoutes, snapshotRoutes } from "./machine-copies.ts";
import { metaRoutes } from "./meta.ts";
import { orderRoutes } from "./orders.ts";
import { resellerRoutes } from "./reseller.ts";
import { controlRoutes } from "./service-control.ts";
import { serviceRoutes } from "./services.ts";
import { sshKeyRoutes } from "./ssh-keys.ts";
import { vpsCancelRoute, vpsRoutes } from "./vps.ts";
import { webhookStreamRoute } from "./webhook-stream.ts";

/**
 * The whole route table. Each route group lives in its own file and is added here.
 */
export function allRoutes(
  publicUrl: string,
  opts: { streamHeartbeatMs?: number; consoleTickets?: ConsoleTickets } = {},
): RouteDef[] {
  const table: RouteDef[] = [];
  table.push(...metaRoutes(() => table, publicUrl));
  table.push(
    ...accountRoutes,
    ...serviceRoutes,
    ...controlRoutes,
    ...vpsRoutes,
    consoleRoute(publicUrl, opts.consoleTickets),
    ...snapshotRoutes,
    vpsCancelRoute,
    ...backupRoutes,
    ...dedicatedRoutes,
  );
  table.push(
    ...addonUpgradeRoutes,
    ...sshKeyRoutes,
    ...jobRoutes,
    ...orderRoutes,
    ...documentRoutesAll,
    ...resellerRoutes,
  );
  table.push(webhookStreamRoute(opts.streamHeartbeatMs ?? 15_000));
  return table;
}
