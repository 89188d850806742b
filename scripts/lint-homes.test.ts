import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { checkFiles, checkSource, RULES } from "./lint-homes.ts";

const root = path.resolve(import.meta.dirname, "..");

/** One planted copy per rule, each in a file of the kind the rule watches. */
const PLANTED: Record<string, { file: string; text: string }> = {
  "uuid-check": {
    file: "services/billing/src/planted.ts",
    text: "export const ok = (s: string) => /^[0-9a-f-]{36}$/i.test(s);\n",
  },
  "page-size": {
    file: "services/gateway/src/pages/planted.ts",
    text: "export const q = (p: number) => ({ page: p, limit: 20 });\n",
  },
  "money-parse": {
    file: "services/gateway/src/pages/planted.ts",
    text: 'export const ok = (s: string) => /^-?\\d{1,12}(\\.\\d{1,4})?$/.test(s) && s !== "";\n',
  },
  "enum-words": {
    file: "services/billing/src/planted.ts",
    text:
      "declare const TopUpStatus: { PENDING: 1; CREDITED: 2 };\n" +
      'export const w = (s: number) => (s === TopUpStatus.PENDING ? "pending" : s === TopUpStatus.CREDITED ? "credited" : "");\n',
  },
  "date-format": {
    file: "services/gateway/src/pages/planted.ts",
    text: "export const when = (d: Date) => d.toISOString().slice(0, 16);\n",
  },
  "account-currency": {
    file: "services/billing/src/planted.ts",
    text:
      'import type { Sql } from "@hb/platform";\n' +
      "export const c = (sql: Sql) => sql`select balance, currency from balances where person_id = 'p'`;\n",
  },
  "currency-decimals": {
    file: "services/billing/src/payments/planted.ts",
    text: 'export const WHOLE = new Set(["JPY", "KRW", "CLP", "VND"]);\n',
  },
};

describe("one home per rule (scripts/lint-homes.ts)", () => {
  it("has a planted copy for every rule", () => {
    assert.deepEqual(Object.keys(PLANTED).sort(), RULES.map((r) => r.name).sort());
  });

  for (const [rule, { file, text }] of Object.entries(PLANTED)) {
    it(`refuses a planted ${rule} copy and names its home`, () => {
      const found = checkSource(file, text);
      assert.equal(found.length, 1, JSON.stringify(found));
      assert.equal(found[0].rule, rule);
      const home = RULES.find((r) => r.name === rule)!.home[0];
      assert.match(found[0].message, new RegExp(home.replaceAll(".", "\\.").replaceAll("/", "\\/")));
    });
  }

  it("accepts each rule in its home, labels for people, and cool-down limits", () => {
    for (const r of RULES) assert.deepEqual(checkSource(r.home[0], PLANTED[r.name].text), []);
    const labels =
      "declare const M: { CARD: 1; BANK_TRANSFER: 2 };\n" +
      'export const l = (m: number) => (m === M.CARD ? "Card" : m === M.BANK_TRANSFER ? "Bank transfer" : "");\n' +
      'export const rule = { action: "pay", limit: 10, windowSeconds: 60 };\n' +
      "export const example = { page: 1, limit: 50, total: 1, pages: 1 };\n";
    assert.deepEqual(checkSource("services/gateway/src/pages/labels.ts", labels), []);
  });

  it("does not read tests or generated code", () => {
    // None of these exist: a path the checker would read throws ENOENT.
    const skipped = [
      "test/x.ts",
      "services/billing/src/x.test.ts",
      "packages/contracts/gen/x_pb.ts",
      "a.gen.ts",
    ];
    assert.deepEqual(checkFiles(root, skipped), []);
  });

  it("npm run lint's checker exits non-zero on a planted copy and zero on the tree", () => {
    mkdirSync(path.join(root, ".tmp"), { recursive: true });
    const dir = mkdtempSync(path.join(root, ".tmp", "lint-homes-"));
    try {
      const planted = path.join(dir, "planted.ts");
      writeFileSync(planted, PLANTED["uuid-check"].text);
      const bad = spawnSync(process.execPath, ["scripts/lint-homes.ts", planted], {
        cwd: root,
        encoding: "utf8",
      });
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /\[uuid-check\].*packages\/platform\/src\/ids\.ts/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The whole tree, as npm run lint runs it.
    const tree = spawnSync(process.execPath, ["scripts/lint-homes.ts"], { cwd: root, encoding: "utf8" });
    assert.equal(tree.status, 0, tree.stderr);
  });
});
