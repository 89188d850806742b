import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import { GATEWAY } from "./helpers.ts";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");

// A client generated from /openapi.json by a mainstream generator (openapi-typescript, used
// through openapi-fetch) must give real types: a program reading fields of a VPS, an invoice and an
// order type-checks, and one reading a field that does not exist does not.
const program = `import createClient from "openapi-fetch";
import type { paths } from "./api.ts";

const client = createClient<paths>({ baseUrl: "http://localhost:8080/api/v1" });

export async function readRealFields() {
  const vps = await client.GET("/vps", { params: { query: { limit: 10 } } });
  const first = vps.data?.data[0];
  const state: "creating" | "running" | "stopped" | "paused" | "error" | undefined = first?.instance?.state;
  const due: string | undefined = first?.billing.next_due_date;
  const address: string | undefined = first?.ip_addresses[0]?.address;
  const pages: number | undefined = vps.data?.pagination.pages;

  const invoice = await client.GET("/invoices/{id}", { params: { path: { id: "0" } } });
  const total: number | undefined = invoice.data?.data.total;

  const order = await client.POST("/orders", { body: { productId: "0", billingCycle: "monthly" } });
  const settled: boolean | undefined = order.data?.data.settled;
  const orderNumber: string | undefined = order.data?.data.order.order_number;
  return { state, due, address, pages, total, settled, orderNumber };
}
`;

async function typecheck(dir: string, source: string) {
  await writeFile(path.join(dir, "program.ts"), source);
  try {
    // TypeScript 7's compiler, as `npm run typecheck` (docs/architecture.md, Conventions): the
    // generated types are large, and TypeScript 5.9 took most of this file's CPU over them.
    await run(process.execPath, [path.join(root, "node_modules/typescript-7/bin/tsc"), "-p", dir], {
      cwd: root,
    });
    return "";
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err);
  }
}

describe("a client generated from /openapi.json", () => {
  it("types the real fields of a VPS, an invoice and an order, and refuses a field that does not exist", async () => {
    const doc = (await (await fetch(`${GATEWAY}/api/v1/openapi.json`)).json()) as OpenAPI3;
    const types = astToString(await openapiTS(doc));
    // Inside the repository so that openapi-fetch resolves from its node_modules.
    const dir = path.join(root, "test", `.generated-client-${process.pid}`);
    await mkdir(dir, { recursive: true });
    try {
      await writeFile(path.join(dir, "api.ts"), types);
      await writeFile(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: "es2022",
            module: "nodenext",
            moduleResolution: "nodenext",
            allowImportingTsExtensions: true,
            skipLibCheck: true,
          },
          files: ["program.ts"],
        }),
      );
      const ok = await typecheck(dir, program);
      assert.equal(ok, "", `the program reading real fields must type-check:\n${ok}`);
      const wrong = await typecheck(
        dir,
        program.replace("first?.billing.next_due_date", "first?.billing.no_such_field"),
      );
      assert.match(wrong, /no_such_field/, "a field that does not exist must not type-check");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
