/**
 * examples/webhook-receiver runs as its README says, on plain Node (type stripping off, so no
 * TypeScript is involved), and accepts a real delivery from the platform.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { DeliveryStatus, WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { eventually, grpc, newPartner, signed } from "./helpers.ts";

const webhooks = grpc([WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR");
const root = path.join(import.meta.dirname, "..");
const example = path.join(root, "examples/webhook-receiver");

/** The README's run block: `cd <dir>` then `VAR=value ... <command> <args>`. */
function readmeCommand() {
  const readme = readFileSync(path.join(example, "README.md"), "utf8");
  const block = /## Run it[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, "the README has a sh block under 'Run it'");
  const [cd, run] = block.trim().split("\n");
  const words = run.trim().split(/\s+/);
  const env = Object.fromEntries(
    words
      .filter((w) => /^[A-Z_]+=/.test(w))
      .map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
  );
  const [command, ...args] = words.filter((w) => !/^[A-Z_]+=/.test(w));
  return { cwd: path.join(root, cd.replace(/^cd\s+/, "")), env, command, args };
}

describe("examples/webhook-receiver", () => {
  let child: ChildProcess | undefined;
  after(() => child?.kill());

  it("starts as its README says and verifies a real delivery, refusing a forged one", async () => {
    const p = await newPartner();
    const readme = readmeCommand();
    assert.deepEqual(Object.keys(readme.env), ["WEBHOOK_SECRET", "PORT"]);
    assert.equal(readme.command, "node");
    let out = "";
    child = spawn(readme.command, readme.args, {
      cwd: readme.cwd,
      // The README's variables with this partner's secret, and any free port instead of 9000.
      env: {
        ...process.env,
        WEBHOOK_SECRET: p.secret,
        PORT: "0",
        NODE_OPTIONS: "--no-experimental-strip-types",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const port = await eventually(async () => /listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1]);
    await webhooks.updateProgrammeSettings({ addAllowedDestinations: [`127.0.0.1:${port}`] });
    const saved = await signed(p, "PUT", "/api/v1/reseller/account/webhook", {
      webhookUrl: `http://127.0.0.1:${port}/`,
    });
    assert.equal(saved.status, 200, saved.text);

    const q = await signed(p, "POST", "/api/v1/reseller/webhooks/test");
    const id = q.body.data.deliveryId as string;
    await eventually(async () => out.includes(`${id} webhook.test `));
    await eventually(async () =>
      (await webhooks.listDeliveries({ partnerId: p.customerId, limit: 5 })).deliveries.some(
        (d) => d.id === id && d.status === DeliveryStatus.DELIVERED && d.responseCode === 200,
      ),
    );

    const timestamp = new Date().toISOString();
    const forged = await fetch(`http://127.0.0.1:${port}/`, {
      method: "POST",
      headers: {
        "x-webhook-id": "forged",
        "x-webhook-event": "order.paid",
        "x-webhook-timestamp": timestamp,
        "x-webhook-signature": `hmac-sha256=${"0".repeat(64)}`,
      },
      body: JSON.stringify({ event: "order.paid", timestamp, data: {} }),
    });
    assert.deepEqual([forged.status, await forged.text()], [400, "bad_signature"]);
    assert.ok(!out.includes("forged order.paid"));
  });
});
