import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { globSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { compileCache, SERVICE_MEMORY_ENV, SERVICE_NODE_ARGS, STACK_PROCESSES } from "./stack.ts";

const root = path.resolve(import.meta.dirname, "..");
const dockerfile = readFileSync(path.join(root, "deploy", "Dockerfile"), "utf8");

/** The value of `NAME=value` on the image's `ENV NODE_OPTIONS=… MALLOC_ARENA_MAX=…` line. */
function imageEnv(name: string): string | undefined {
  for (const line of dockerfile.split("\n")) {
    if (!line.startsWith("ENV ") || !line.includes("NODE_OPTIONS=")) continue;
    // NODE_OPTIONS's value holds spaces, so it is quoted; the other settings are single words.
    const quoted = new RegExp(`${name}="([^"]*)"`).exec(line);
    if (quoted) return quoted[1];
    const bare = new RegExp(`${name}=(\\S+)`).exec(line);
    if (bare) return bare[1];
  }
  return undefined;
}

describe("the services' memory settings", () => {
  it("are the same in the image as in the local stack", () => {
    assert.equal(imageEnv("NODE_OPTIONS"), SERVICE_NODE_ARGS);
    assert.equal(imageEnv("MALLOC_ARENA_MAX"), SERVICE_MEMORY_ENV.MALLOC_ARENA_MAX);
  });

  it("give each service a bounded heap, far above its live heap", () => {
    // V8 refuses a misspelt flag at start, so this also proves the flags are taken.
    const limit = Number(
      execFileSync(
        process.execPath,
        [
          ...SERVICE_NODE_ARGS.split(" "),
          "-e",
          "process.stdout.write(String(require('node:v8').getHeapStatistics().heap_size_limit))",
        ],
        { encoding: "utf8" },
      ),
    );
    const mb = limit / 2 ** 20;
    // Below V8's default for a large machine (about 4 GB here), which let the old generation hold
    // up to four times the live heap in garbage (docs/benchmarks.md, "Memory"); above the 50 MB
    // live heap measured at the largest VPS page, with room to spare.
    assert.ok(mb <= 300, `heap limit ${mb.toFixed(0)} MB`);
    assert.ok(mb >= 200, `heap limit ${mb.toFixed(0)} MB`);
  });

  it("has the image's compile cache hold every TypeScript module a service imports lazily", () => {
    // The image fills the cache by starting each entry point, which stops at its configuration
    // check: a module imported later would be type-stripped at every start (+13 MB RSS).
    const lazy = globSync("{packages,services}/*/src/**/*.ts", { cwd: root })
      .filter((f) => !f.endsWith(".test.ts"))
      .flatMap((f) =>
        [...readFileSync(path.join(root, f), "utf8").matchAll(/\bimport\("(\.{1,2}\/[^"]+\.ts)"\)/g)].map(
          (m) => path.relative(root, path.resolve(root, path.dirname(f), m[1])),
        ),
      );
    assert.ok(lazy.length > 0, "the scan finds the lazily imported request rules");
    for (const file of lazy)
      assert.ok(dockerfile.includes(`/app/${file}`), `${file} is not warmed in deploy/Dockerfile`);
  });
});

/**
 * What a child process had loaded when it exited, after `args` (an entry point, or `-e` and an ES
 * module's code): whether Node's bundled undici (fetch's implementation), and which packages from
 * node_modules.
 */
function loadedBy(args: string[]): { undici: boolean; packages: string[]; output: string } {
  const report = `
    import { registerHooks } from "node:module";
    const packages = new Set();
    registerHooks({
      resolve(specifier, context, next) {
        const r = next(specifier, context);
        const m = new RegExp("/node_modules/((?:@[^/]+/)?[^/]+)/").exec(r.url);
        if (m) packages.add(m[1]);
        return r;
      },
    });
    process.on("exit", () => process.stdout.write("\\nloaded=" + JSON.stringify({
      undici: process.moduleLoadList.some((m) => m.includes("undici")),
      packages: [...packages],
    })));`;
  const run = spawnSync(
    process.execPath,
    ["--import", `data:text/javascript,${encodeURIComponent(report)}`, ...args],
    {
      cwd: root,
      encoding: "utf8",
      // An empty DATABASE_URL stops an entry point at its configuration check, after its imports.
      env: { PATH: process.env.PATH, NODE_COMPILE_CACHE: compileCache, DATABASE_URL: "" },
    },
  );
  const at = run.stdout.lastIndexOf("\nloaded=");
  assert.ok(at >= 0, `no report: ${run.stderr}`);
  return { ...JSON.parse(run.stdout.slice(at + "\nloaded=".length)), output: run.stdout.slice(0, at) };
}

describe("what a service loads at start that idle does not use (docs/benchmarks.md, issue 31 §5)", () => {
  // Node's bundled undici: no service uses it; loaded, it held 2 to 3 MB of each idle service's
  // resident memory. An ES module `import … from "node:http"` reads http's WebSocket export, which
  // loads it; node-http.ts hands http over without reading it.
  for (const name of STACK_PROCESSES)
    it(`${name}'s modules do not load undici`, () => {
      assert.equal(loadedBy([`services/${name}/src/main.ts`]).undici, false);
    });

  it("compute's modules do not load ssh2 (for SSH keys only; about 10 MB)", () => {
    assert.ok(!loadedBy(["services/compute/src/main.ts"]).packages.includes("ssh2"));
  });

  it("billing's modules do not load stripe (for card payments only; about 20 MB)", () => {
    assert.ok(!loadedBy(["services/billing/src/main.ts"]).packages.includes("stripe"));
  });

  it("clients under one identity share one TLS context (about 100 KB each; the gateway has 19 clients)", () => {
    const code = `
      import { mkdtempSync, rmSync } from "node:fs";
      import { tmpdir } from "node:os";
      import path from "node:path";
      import tls from "node:tls";
      import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
      import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
      import { loadTlsIdentity, rpcClient } from "@hb/platform";
      import { certFiles, ensureDevCerts } from "./scripts/dev-certs.ts";
      let contexts = 0;
      const create = tls.createSecureContext;
      tls.createSecureContext = (...args) => (contexts++, create(...args));
      const dir = mkdtempSync(path.join(tmpdir(), "hb-contexts-"));
      try {
        const opts = { timeoutMs: 1000, tls: loadTlsIdentity(certFiles(await ensureDevCerts(path.join(dir, "certs")), "gateway")) };
        const handles = [AuthService, BillingService, AuthService].map((d) => rpcClient("grpc-js", d, "127.0.0.1:1", opts));
        for (const h of handles) h.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      process.stdout.write("contexts=" + contexts);
    `;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: root,
      encoding: "utf8",
    });
    assert.match(run.stdout, /contexts=1$/, run.stderr);
  });

  it("serving and calling unary and stream RPCs over grpc-js does not load undici", () => {
    // Connect's createHandlerContext made three Headers (undici's class) at every call.
    const code = overGrpcJs({
      platform: [],
      handlers: `
        async *streamEvents(_req, ctx) {
          yield { item: { case: "opened", value: { openStreams: ctx.signal.aborted ? 0 : 1 } } };
        },
        setWebhookUrl: () => ({ url: "" }),`,
      calls: `
        await client.setWebhookUrl({ partnerId: ID, url: "" });
        for await (const m of client.streamEvents({ partnerId: ID })) if (m.item.case !== "opened") throw new Error("no stream");`,
    });
    assert.equal(loadedBy(["--input-type=module", "-e", code]).undici, false);
  });

  it("a call that fails over grpc-js, raised on purpose or thrown by mistake, does not load undici", () => {
    // ConnectError's constructor makes a Headers for its metadata; loading undici for it cost a
    // process 8 MB from its first error on (docs/benchmarks.md, 2026-11-29 night).
    const code = overGrpcJs({
      platform: ["apiError", "resolveError"],
      handlers: `
        setWebhookUrl: (req) => {
          if (req.url === "") throw apiError("NOT_FOUND", "Partner not found");
          throw new Error("a defect");
        },`,
      calls: `
        const codes = [];
        for (const url of ["", "https://example.com/x"])
          await client.setWebhookUrl({ partnerId: ID, url }).then(() => codes.push("answered"), (err) => codes.push(resolveError(err).code));
        resolveError(new Error("thrown in the caller"));
        process.stdout.write("codes=" + codes.join(","));`,
    });
    const loaded = loadedBy(["--input-type=module", "-e", code]);
    assert.match(loaded.output, /codes=NOT_FOUND,INTERNAL_ERROR$/, "both calls failed as they should");
    assert.equal(loaded.undici, false);
  });
});

/**
 * An ES module that serves WebhooksService over grpc-js with mutual TLS (`handlers`: the body of
 * its implementation), calls it as the gateway (`calls`, with `client` and a partner `ID`), and
 * stops; `platform` names what else it imports from @hb/platform.
 */
function overGrpcJs(o: { platform: string[]; handlers: string; calls: string }): string {
  const platform = ["bind", "createLogger", "loadTlsIdentity", "rpcClient", "serveRpc", ...o.platform].sort();
  return `
    import { mkdtempSync, rmSync } from "node:fs";
    import { tmpdir } from "node:os";
    import path from "node:path";
    import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
    import { ${platform.join(", ")} } from "@hb/platform";
    import { certFiles, ensureDevCerts } from "./scripts/dev-certs.ts";
    const ID = "0195e3a4-5c6d-7e7f-8a9b-0c1d2e3f4a5b";
    const dir = mkdtempSync(path.join(tmpdir(), "hb-undici-"));
    try {
      const certs = await ensureDevCerts(path.join(dir, "certs"));
      const impl = bind(WebhooksService, {${o.handlers}
      });
      const server = await serveRpc("grpc-js", 0, [impl], createLogger("t", "error"), loadTlsIdentity(certFiles(certs, "webhooks")));
      const { client, close } = rpcClient("grpc-js", WebhooksService, "127.0.0.1:" + server.port, {
        timeoutMs: 5000,
        tls: loadTlsIdentity(certFiles(certs, "gateway")),
      });${o.calls}
      close();
      await server.close(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  `;
}
