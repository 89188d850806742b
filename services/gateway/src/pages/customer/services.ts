import type { Router } from "express";
import type { Kit } from "./kit.ts";
import { addonRoutes } from "./service/addons.ts";
import { cancelRoutes } from "./service/cancel.ts";
import { consoleRoutes } from "./service/console.ts";
import { copyRoutes } from "./service/copies.ts";
import { overviewRoutes } from "./service/overview.ts";
import { powerRoutes } from "./service/power.ts";
import { reinstallRoutes } from "./service/reinstall.ts";
import { upgradeRoutes } from "./service/upgrades.ts";

/**
 * The service pages, one module per page or small group of actions (service/*.ts); their
 * operations and page actions are declared in service/table.ts.
 */
export function serviceRoutes(kit: Kit, router: Router): void {
  overviewRoutes(kit, router);
  powerRoutes(kit, router);
  reinstallRoutes(kit, router);
  consoleRoutes(kit, router);
  copyRoutes(kit, router);
  cancelRoutes(kit, router);
  addonRoutes(kit, router);
  upgradeRoutes(kit, router);
}
