import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import type { CooldownRule } from "@hb/platform/cooldown";
import { COOLDOWN_TABLE, cooldowns, PORTAL_COOLDOWNS } from "./cooldowns.ts";
import { allRoutes } from "./routes/index.ts";

const specPath = path.resolve(import.meta.dirname, "../../../docs/spec/customer-api-and-webhooks.md");

/** The spec's "Per-action cool-downs" table: Action cell → Cool-down cell. */
function specRows(): Map<string, string> {
  const text = readFileSync(specPath, "utf8");
  const start = text.indexOf("| Action | Cool-down |");
  assert.ok(start >= 0, "the spec has its cool-down table");
  const rows = new Map<string, string>();
  for (const line of text.slice(start).split("\n").slice(2)) {
    if (!line.startsWith("|")) break;
    const [action, cooldown] = line
      .split("|")
      .slice(1, 3)
      .map((c) => c.trim());
    rows.set(action, cooldown);
  }
  return rows;
}

/** "10 per minute per service", "1 per 5 minutes per service", "5 per minute across all ..., failed attempts counted". */
function parse(cell: string) {
  const m = /^(\d+) per (?:(\d+) )?minutes?(.*)$/.exec(cell);
  assert.ok(m, `a cool-down cell reads "<n> per [<m>] minute(s) ...": ${cell}`);
  const rest = m[3];
  return {
    limit: Number(m[1]),
    windowSeconds: Number(m[2] ?? 1) * 60,
    per: / per (service|document)/.test(rest) ? "id" : "all",
    keepOnFailure: /failed attempts counted/.test(rest),
  };
}

describe("the cool-down table", () => {
  it("is the spec's table, row for row", () => {
    const spec = specRows();
    const ours = Object.values(COOLDOWN_TABLE);
    assert.deepEqual(ours.map((r) => r.spec).sort(), [...spec.keys()].sort());
    for (const row of ours) {
      const cell = spec.get(row.spec) ?? "";
      const rule: CooldownRule = row.rule;
      assert.deepEqual(
        {
          limit: row.rule.limit,
          windowSeconds: row.rule.windowSeconds,
          per: row.per,
          keepOnFailure: rule.keepOnFailure ?? false,
        },
        parse(cell),
        `${row.spec}: ${cell}`,
      );
    }
  });

  it("every action (the portal-only ones too) has its own window name, and every route's cool-down is a row of the table", () => {
    const actions = [
      ...Object.values(COOLDOWN_TABLE).map((r) => r.rule.action),
      ...Object.values(PORTAL_COOLDOWNS).map((r) => r.action),
    ];
    assert.equal(new Set(actions).size, actions.length);
    const rows = new Set<unknown>(Object.values(cooldowns));
    const routes = allRoutes("http://127.0.0.1").filter((r) => r.cooldown);
    assert.ok(routes.length >= 15, `routes with a cool-down: ${routes.length}`);
    for (const r of routes)
      assert.ok(rows.has(r.cooldown), `${r.method} ${r.path} takes its cool-down from the table`);
  });
});
