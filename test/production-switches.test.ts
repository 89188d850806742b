/**
 * A service started with NODE_ENV=production refuses every test switch (the list in
 * packages/platform/src/test-switches.ts): it exits non-zero before it connects to anything, with a
 * message naming the switch and never a secret's or the switch's value.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { describe, it } from "node:test";
import { type TestSwitchName, testSwitches } from "@hb/platform";

const ROOT = path.join(import.meta.dirname, "..");
const random = () => randomBytes(24).toString("base64url");

/** Starts a service as a deployment would and gives its exit code and output once it ends. */
function start(service: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, "services", service, "src/main.ts")], {
      cwd: ROOT,
      // Only what a production pod would have: none of the test run's own settings.
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c));
    child.stderr.on("data", (c: Buffer) => (output += c));
    // A service that got past its configuration would go on to connect and serve: killed at the
    // deadline, it fails the test with its output instead of hanging the file.
    const deadline = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(deadline);
      resolve({ code, output });
    });
  });
}

/** A switch turned on, as a test stack sets it; the URL carries credentials, which must not leak. */
const onValue = (name: TestSwitchName, secret: string) =>
  ({
    BILLING_CLOCK_CONTROL: "true",
    SIM_FAILURES: "1",
    STRIPE_API_BASE: `http://stand-in:${secret}@127.0.0.1:12111`,
  })[name];

describe("a production start with a test switch", () => {
  for (const name of Object.keys(testSwitches) as TestSwitchName[]) {
    const { service } = testSwitches[name];
    it(`${service} refuses ${name}, naming it and no value`, async () => {
      // Good secrets, so the switch is the only thing refused.
      const secrets = {
        DATABASE_URL: `postgres://hb_${service}:${random()}@127.0.0.1:1/hosting`,
        STRIPE_WEBHOOK_SECRET: `whsec_${random()}`,
      };
      const switchSecret = random();
      const r = await start(service, {
        NODE_ENV: "production",
        TLS_CA: "/etc/hb/tls/ca.crt",
        TLS_CERT: "/etc/hb/tls/tls.crt",
        TLS_KEY: "/etc/hb/tls/tls.key",
        ...secrets,
        [name]: onValue(name, switchSecret),
      });
      assert.notEqual(r.code, 0, r.output);
      assert.notEqual(r.code, null, `killed at the deadline: it did not refuse to start\n${r.output}`);
      assert.match(r.output, new RegExp(`${name}: a test switch .*unset it \\(NODE_ENV=production\\)`));
      for (const value of [...Object.values(secrets), switchSecret]) {
        assert.ok(!r.output.includes(value), `the output carries a secret value:\n${r.output}`);
      }
      assert.ok(!r.output.includes(new URL(secrets.DATABASE_URL).password), r.output);
    });
  }
});
