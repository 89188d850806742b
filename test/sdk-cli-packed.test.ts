/**
 * The SDK and the hb CLI as a user gets them: both packed with `npm pack`, installed into an
 * empty project outside the repository (test/support/packed-project.ts keeps that install for
 * the next run while its inputs are unchanged), and run there by the machine's Node 20 against the
 * running stack. Nothing of the workspace is visible to them.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { type Account, addCredit, api, balanceOf, GATEWAY, newAccount, newProduct } from "./helpers.ts";
import { packedProject } from "./support/packed-project.ts";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");
/** The machine's Node, not the project's 24: the packages promise Node >= 20. */
const SYSTEM_NODE = "/usr/bin/node";

let dir = "";
let project = "";
let hbBin = "";
let configFile = "";

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the installed hb under the system Node, with the given stdin and environment. */
function hb(args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(SYSTEM_NODE, [hbBin, ...args], {
      cwd: project,
      env: { PATH: process.env.PATH ?? "", HOME: dir, HB_CONFIG: configFile, ...opts.env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? "");
  });
}

const json = (r: Result) => {
  assert.equal(r.code, 0, `hb failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout);
};

/** An OpenSSH public key line for a fresh ed25519 key. */
function sshPublicKey(comment: string) {
  const der = generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "der" });
  const field = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  const blob = Buffer.concat([field(Buffer.from("ssh-ed25519")), field(der.subarray(der.length - 32))]);
  return `ssh-ed25519 ${blob.toString("base64")} ${comment}`;
}

describe("the packed SDK and CLI installed into an empty project", {
  skip: !existsSync(SYSTEM_NODE) && `${SYSTEM_NODE} is missing`,
}, () => {
  let acct: Account;
  let productId: string;

  before(async () => {
    const { stdout: version } = await run(SYSTEM_NODE, ["--version"]);
    assert.ok(Number(/^v(\d+)/.exec(version)![1]) >= 20, `the system Node is ${version}`);
    dir = await mkdtemp(path.join(tmpdir(), "hb-packed-"));
    configFile = path.join(dir, "config", "hb.json");
    const packed = await packedProject(dir);
    project = packed.project;
    for (const [pkg, files] of Object.entries(packed.packedFiles))
      assert.ok(
        !files.some((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")),
        `no TypeScript source in ${pkg}: ${files}`,
      );
    hbBin = path.join(project, "node_modules", "@hosting-platform", "cli", "bin", "hb.js");

    acct = await newAccount();
    await addCredit(acct, "100.0000");
    productId = (await newProduct("vps")).id;
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("keeps the API URL and key in a 0600 file and never prints the key", async () => {
    const add = await hb(["context", "add", "test", "--api-url", GATEWAY, "--api-key-stdin"], {
      input: acct.key,
    });
    assert.equal(add.code, 0, add.stderr);
    assert.equal((await stat(configFile)).mode & 0o777, 0o600);
    assert.ok(
      !add.stdout.includes(acct.key) && !add.stderr.includes(acct.key),
      "the key must not be printed",
    );
    const list = json(await hb(["context", "list", "-o", "json"]));
    assert.deepEqual(list, [
      {
        name: "test",
        current: true,
        api_url: `${GATEWAY}/api/v1`,
        api_key: `${acct.key.split("_").slice(0, 2).join("_")}_…`,
      },
    ]);
  });

  it("buys a VPS with orders create --wait, lists it, reboots it with --wait", async () => {
    const order = json(
      await hb([
        "-o",
        "json",
        "orders",
        "create",
        "--product",
        productId,
        "--hostname",
        "web-1",
        "--image",
        "debian-12",
        "--wait",
      ]),
    );
    assert.equal(order.settled, true);
    assert.equal(order.services.length, 1);
    const vpsId = order.services[0].id as string;
    assert.equal(order.services[0].status, "active");

    const listed = json(await hb(["vps", "list", "--output", "json"]));
    const mine = listed.find((v: { id: string }) => v.id === vpsId);
    assert.equal(mine.hostname, "web-1");
    assert.equal(mine.instance.state, "running");

    const table = await hb(["vps", "list"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout.split("\n")[0], /^ID\s+HOSTNAME\s+STATUS\s+STATE/);
    assert.match(table.stdout, new RegExp(`${vpsId}\\s+web-1\\s+active\\s+running`));

    const reboot = await hb(["vps", "reboot", vpsId, "--wait", "-o", "json"]);
    const job = json(reboot);
    assert.equal(job.action, "reboot");
    assert.equal(job.status, "succeeded");
    assert.equal(job.resource.id, vpsId);
    // The progress display goes to stderr (a line per change when it is not a terminal).
    assert.match(reboot.stderr, /reboot \[#{20}\] 100% succeeded/);

    const shown = json(await hb(["jobs", "show", job.id, "-o", "json"]));
    assert.equal(shown.status, "succeeded");
  });

  it("pays an invoice from credit", async () => {
    const order = json(
      await hb(["-o", "json", "orders", "create", "--product", productId, "--hostname", "pay-1", "--wait"]),
    );
    const serviceId = order.services[0].id as string;
    const renew = await api("POST", `/api/v1/services/${serviceId}/renew`, { key: acct.key });
    assert.equal(renew.status, 200, renew.text);
    const unpaid = json(await hb(["invoices", "list", "--status", "unpaid", "-o", "json"]));
    const invoice = unpaid.find((i: { service_id: string | null }) => i.service_id === serviceId);
    assert.ok(invoice, "the renewal invoice is listed as unpaid");
    const balance = await balanceOf(acct.key);

    const paid = json(await hb(["invoices", "pay", invoice.id, "-o", "json"]));
    assert.equal(paid.invoice.status, "paid");
    assert.equal(paid.creditApplied, invoice.total);
    assert.equal(await balanceOf(acct.key), balance - invoice.total);
    const after = await api("GET", `/api/v1/invoices/${invoice.id}`, { key: acct.key });
    assert.equal(after.body.data.status, "paid");
  });

  it("exits non-zero when provisioning or a job fails, and when the API refuses", async () => {
    const failed = await hb([
      "-o",
      "json",
      "orders",
      "create",
      "--product",
      productId,
      "--hostname",
      "web-fail-1",
      "--wait",
    ]);
    assert.equal(failed.code, 3, failed.stderr);
    const order = JSON.parse(failed.stdout);
    assert.equal(order.services[0].status, "provisioning_failed");
    assert.match(failed.stderr, /provisioning_failed/);

    const builds = json(await hb(["jobs", "list", "--resource", order.services[0].id, "-o", "json"]));
    assert.equal(builds[0].status, "failed");
    const wait = await hb(["jobs", "wait", builds[0].id]);
    assert.equal(wait.code, 3);
    assert.match(wait.stderr, /failed/);

    const missing = await hb(["vps", "show", "0193a5c2-7d1e-7c4a-9f3b-2e8d6a1b4c5d"]);
    assert.equal(missing.code, 1);
    const envelope = JSON.parse(missing.stderr);
    assert.equal(envelope.code, "NOT_FOUND");
    assert.equal(envelope.success, false);
    assert.match(envelope.error, /not found/i, "the API's own message, not a status line");

    const usage = await hb(["vps", "rebot", "x"]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /Did you mean reboot\?/);
  });

  it("takes the API from HB_API_URL and HB_API_KEY, and manages SSH keys", async () => {
    const other = await newAccount();
    const env = { HB_API_URL: GATEWAY, HB_API_KEY: other.key, HB_CONFIG: path.join(dir, "none.json") };
    const line = sshPublicKey("laptop");
    const added = json(
      await hb(["ssh-keys", "add", "--name", "laptop", "--key", line, "-o", "json"], { env }),
    );
    assert.equal(added.name, "laptop");
    assert.match(added.fingerprint, /^SHA256:/);
    const listed = json(await hb(["ssh-keys", "list", "-o", "json"], { env }));
    assert.deepEqual(
      listed.map((k: { id: string }) => k.id),
      [added.id],
    );
    json(await hb(["ssh-keys", "rm", added.id, "-o", "json"], { env }));
    assert.deepEqual(json(await hb(["ssh-keys", "list", "-o", "json"], { env })), []);
  });

  it("prints help for every command and shell completion", async () => {
    for (const cmd of [
      [],
      ["vps"],
      ["vps", "reinstall"],
      ["orders", "create"],
      ["invoices", "pay"],
      ["jobs", "wait"],
      ["webhooks", "listen"],
    ]) {
      const help = await hb([...cmd, "--help"]);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, new RegExp(`^Usage: hb ${cmd.join(" ")}`));
    }
    const bash = await hb(["completion", "bash"]);
    assert.match(bash.stdout, /complete -o default -F _hb_completion hb/);
    const words = await hb(["__complete", "--", "vps", "re"]);
    assert.deepEqual(words.stdout.trim().split("\n"), ["reboot", "reinstall"]);
  });

  it("lets a Node 20 program use the SDK: typed errors, pagination, jobs; its types check", async () => {
    await writeFile(
      path.join(project, "use-sdk.mjs"),
      `import { createHbClient, isHbError } from "@hosting-platform/sdk";
const hb = createHbClient({ baseUrl: process.env.API, apiKey: process.env.KEY });
const ids = [];
for await (const vps of hb.paginate("/vps", { limit: 1 })) ids.push(vps.id);
let code;
try { await hb.get("/invoices/{id}", { params: { path: { id: "0193a5c2-7d1e-7c4a-9f3b-2e8d6a1b4c5d" } } }); }
catch (e) { code = isHbError(e, "NOT_FOUND") ? e.code : String(e); }
console.log(JSON.stringify({ ids, code }));
`,
    );
    const { stdout } = await run(SYSTEM_NODE, ["use-sdk.mjs"], {
      cwd: project,
      env: { API: GATEWAY, KEY: acct.key },
    });
    const out = JSON.parse(stdout);
    const vps = await api("GET", "/api/v1/vps?limit=200", { key: acct.key });
    assert.deepEqual(
      out.ids,
      vps.body.data.map((v: { id: string }) => v.id),
    );
    assert.ok(out.ids.length >= 3, "one VPS a page: every page was read");
    assert.equal(out.code, "NOT_FOUND");

    // The shipped declarations type a consumer's program (and refuse a field that does not exist).
    const program = `import { createHbClient, isHbError } from "@hosting-platform/sdk";
const hb = createHbClient({ baseUrl: "http://localhost:8080", apiKey: "k" });
export async function f() {
  for await (const vps of hb.paginate("/vps")) { const s: string | undefined = vps.instance?.state; void s; }
  const job = await hb.waitForJob("id", { onProgress: (j) => console.log(j.progress) });
  const status: "running" | "succeeded" | "failed" = job.status;
  try { await hb.post("/invoices/{id}/pay", { params: { path: { id: "x" } }, body: {} }); }
  catch (e) { if (isHbError(e, "SCOPE_REQUIRED")) { const scope: string = e.scope; void scope; } }
  return status;
}
`;
    // TypeScript 5.9 on purpose (the typecheck and the packages' builds use 7): the declarations 7
    // emits must type a consumer on the 5.x most users have.
    const tsc = path.join(root, "node_modules/typescript/bin/tsc");
    const check = async (source: string) => {
      await writeFile(path.join(project, "consumer.ts"), source);
      await writeFile(
        path.join(project, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: "es2022",
            lib: ["es2022", "dom", "dom.asynciterable"],
            types: [],
            module: "nodenext",
            moduleResolution: "nodenext",
            // The shipped declarations are read for the program's types, not checked themselves.
            skipLibCheck: true,
          },
          files: ["consumer.ts"],
        }),
      );
      try {
        await run(process.execPath, [tsc, "-p", project], { cwd: project });
        return "";
      } catch (err) {
        return String((err as { stdout?: string }).stdout ?? err);
      }
    };
    assert.equal(await check(program), "");
    assert.match(
      await check(program.replace("vps.instance?.state", "vps.instance?.no_such_field")),
      /no_such_field/,
    );
  });
});
