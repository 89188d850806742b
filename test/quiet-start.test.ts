/**
 * A first start without noise: a process calling a service at 127.0.0.1, as every process of
 * `npm start` and of the tests does, writes no TLS deprecation warning (DEP0123: an IP address as
 * the TLS server name), and the one line `npm install` prints about Node names the right ones.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";

const ROOT = path.join(import.meta.dirname, "..");

/** Runs a module's text on the project's Node in the repository, with `env`. */
function run(code: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", code],
      { cwd: ROOT, env, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("a first start without noise", () => {
  it("a call to a service at 127.0.0.1 over grpc-js warns about nothing", async () => {
    assert.match(process.env.AUTH_ADDR ?? "", /^127\.0\.0\.1:/, "the test stack's services are on loopback");
    const r = await run(
      `import { Health } from "@hb/contracts/grpc/health/v1/health_pb";
       import { stackClient } from "./test/support/clients.ts";
       const { client, close } = stackClient(process.env, [Health], "AUTH_ADDR");
       const answer = await client.check({});
       close();
       console.log("status", answer.status);`,
      process.env,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /status 1/, "the call was answered: SERVING");
    assert.doesNotMatch(r.stderr, /Warning/, r.stderr);
  });

  it("npm install names the Node npm ran on and the project's own, only when they differ", async () => {
    const note = (userAgent: string) =>
      run(`await import("./scripts/runtime-note.ts");`, { ...process.env, npm_config_user_agent: userAgent });
    const older = await note("npm/11.19.1 node/v20.20.2 linux x64 workspaces/false");
    assert.equal(
      older.stdout,
      `npm runs on this machine's Node v20.20.2; the project runs on its own Node v${process.versions.node} (node_modules/.bin/node), which npm start, npm test and every npm script use.\n`,
    );
    const same = await note(`npm/11.19.1 node/v${process.versions.node} linux x64 workspaces/false`);
    assert.equal(same.stdout, "");
  });
});
