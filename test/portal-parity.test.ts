/**
 * Parity of the portal with the API, read from the gateway's route table: every customer operation
 * (a keyed route that is not another path of the same operation) has a portal page or form that
 * calls it, unless it is one of the few API-only operations listed below with the reason. A new
 * route fails this test the day it is added until the portal offers it or it is listed here.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { portalOperations } from "../services/gateway/src/pages/customer/api.ts";
import "../services/gateway/src/pages/customer/billing.ts";
import "../services/gateway/src/pages/customer/machines.ts";
import "../services/gateway/src/pages/customer/reseller-panel.ts";
import "../services/gateway/src/pages/customer/reseller-stream.ts";
import "../services/gateway/src/pages/customer/services.ts";
import "../services/gateway/src/pages/reseller.ts";
import type { RouteDef } from "../services/gateway/src/route.ts";
import { allRoutes } from "../services/gateway/src/routes/index.ts";

/** API-only operations, each with why the portal does not offer it. Keep it under ten. */
const API_ONLY: { route: RegExp; why: string }[] = [
  {
    route: /^GET \/$/,
    why: "the API's root describes the calling key (its scopes and hourly window), which a session has none of",
  },
];

const key = (r: Pick<RouteDef, "method" | "path">) => `${r.method.toUpperCase()} ${r.path}`;

/** Customer operations: keyed routes, one path per operation (aliases are other paths of one). */
const customerOperations = () =>
  allRoutes("http://127.0.0.1").filter((r) => typeof r.auth === "object" && !r.aliasOf && !r.hidden);

describe("portal parity with the route table", () => {
  it("every customer operation of /api/v1 has a portal page or form, or a stated reason not to", () => {
    const offered = new Set(portalOperations().map((o) => `${o.method} ${o.path}`));
    const missing = customerOperations()
      .map(key)
      .filter((k) => !offered.has(k) && !API_ONLY.some((x) => x.route.test(k)));
    assert.deepEqual(missing, [], "customer operations with no portal page");
  });

  it("the portal offers only operations the route table has (no stale entry)", () => {
    const routes = new Set(allRoutes("http://127.0.0.1").map(key));
    const stale = portalOperations()
      .map((o) => `${o.method} ${o.path}`)
      .filter((k) => !routes.has(k));
    assert.deepEqual(stale, []);
  });

  it("the API-only list is short, and each entry still matches a route", () => {
    assert.ok(API_ONLY.length < 10);
    const keys = customerOperations().map(key);
    for (const x of API_ONLY)
      assert.ok(
        keys.some((k) => x.route.test(k)),
        `${x.route} matches no route: ${x.why}`,
      );
  });
});
