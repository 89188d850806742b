import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { operationIdOf } from "./openapi.ts";
import { allRoutes } from "./routes/index.ts";

const routes = allRoutes("https://portal.example.com");

const name = (r: (typeof routes)[number]) => `${r.method.toUpperCase()} ${r.path}`;

describe("route table contract", () => {
  it("gives every route a response schema and an example that validates against it", () => {
    const missing = routes
      .filter((r) => !r.rawContentType)
      .filter((r) => !r.response || r.example === undefined)
      .map((r) => `${name(r)} (${!r.response ? "response" : "example"})`);
    assert.deepEqual(missing, [], `routes without a response schema or example:\n${missing.join("\n")}`);

    const invalid = routes
      .filter((r) => r.response && r.example !== undefined)
      .flatMap((r) => {
        const result = r.response!.safeParse(r.example);
        const extras = Object.entries(r.responseExtra ?? {}).flatMap(([k, schema]) =>
          schema.safeParse(r.exampleExtra?.[k]).success ? [] : [`${k} (beside data) missing or invalid`],
        );
        if (extras.length) return [`${name(r)}: ${extras.join("; ")}`];
        return result.success
          ? []
          : [`${name(r)}: ${result.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}`];
      });
    assert.deepEqual(invalid, [], `examples that do not match their schema:\n${invalid.join("\n")}`);
  });

  it("points every alias at an operation that exists and is not itself an alias", () => {
    const ops = new Map(routes.map((r) => [operationIdOf(r), r]));
    const broken = routes
      .filter((r) => r.aliasOf && (!ops.has(r.aliasOf) || ops.get(r.aliasOf)!.aliasOf))
      .map((r) => `${name(r)} -> ${r.aliasOf}`);
    assert.deepEqual(broken, []);
  });
});
