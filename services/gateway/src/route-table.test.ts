import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import express from "express";
import type { RouteDef } from "./route.ts";
import { firstSegment, routeTable } from "./route-table.ts";
import { allRoutes } from "./routes/index.ts";

describe("the route table, one router per first segment", () => {
  const table = allRoutes("http://localhost");
  let base = "";
  let close = () => {};
  before(async () => {
    const app = express();
    app.use(
      "/api/v1",
      routeTable(table, (def, req, res) => {
        res.json({ route: `${def.method} ${def.path}`, path: req.path });
      }),
    );
    app.use((req, res) => {
      res.status(404).json({ unmatched: req.path });
    });
    const server = app.listen(0);
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    close = () => server.close();
  });
  after(() => close());

  /** A path of the template, each parameter a value of its own. */
  const pathOf = (def: RouteDef) => def.path.replace(/:(\w+)/g, (_m, name: string) => `${name}-1`);

  it("takes every route of the table at its own path and method, with the path a handler sees unchanged", async () => {
    for (const def of table) {
      // Earlier routes of the same method win where two templates match (as in one router).
      const expected = table.find(
        (d) =>
          d.method === def.method && new RegExp(`^${d.path.replace(/:\w+/g, "[^/]+")}$`).test(pathOf(def)),
      );
      const res = await fetch(`${base}${pathOf(def)}`, { method: def.method.toUpperCase() });
      const body = (await res.json()) as { route?: string; path?: string };
      assert.deepEqual(body, { route: `${expected?.method} ${expected?.path}`, path: pathOf(def) }, def.path);
    }
  });

  it("passes a path no route has on to what comes after, segment known or not", async () => {
    for (const path of ["/no-such-segment", "/vps/1/no-such-action", "/VPS"]) {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 404, path);
    }
  });

  it("reads the first segment of a path", () => {
    assert.equal(firstSegment("/vps/123/reboot"), "vps");
    assert.equal(firstSegment("/vps"), "vps");
    assert.equal(firstSegment("/"), "");
  });
});
