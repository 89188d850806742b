import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { ALLOWED_CALLERS, callerCheck } from "./allow-list.ts";
import type { Logger } from "./log.ts";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Every service definition the contracts package generates. */
async function contractServices(): Promise<DescService[]> {
  const gen = path.join(import.meta.dirname, "../../contracts/gen");
  const files = readdirSync(gen, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith("_pb.js"));
  const found: DescService[] = [];
  for (const file of files) {
    const mod = (await import(path.join(gen, file))) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      if (value && typeof value === "object" && (value as { kind?: unknown }).kind === "service")
        found.push(value as DescService);
    }
  }
  return found;
}

describe("the allow-list", () => {
  it("names the callers of every service definition in the contracts", async () => {
    const services = await contractServices();
    assert.ok(services.length >= 10);
    const missing = services.map((s) => s.typeName).filter((name) => !(name in ALLOWED_CALLERS));
    assert.deepEqual(missing, []);
  });

  it("refuses to serve a definition it has no entry for", () => {
    assert.throws(() => callerCheck(AuthStaffService, quiet, {}), /no entry in the allow-list/);
  });

  it("lets a listed caller through and refuses an unlisted one or none with PERMISSION_DENIED", () => {
    const check = callerCheck(AuthStaffService, quiet);
    assert.equal(check("admin", "/m"), undefined);
    assert.equal(check("gateway", "/m")?.code, 7);
    assert.equal(check(undefined, "/m")?.code, 7);
  });
});
