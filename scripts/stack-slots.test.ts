import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { eventually } from "../test/support/eventually.ts";
import { acquireSlots, type SlotServer, startSlotServer } from "./stack-slots.ts";

describe("the private stack cap", () => {
  let server: SlotServer;
  before(async () => {
    server = await startSlotServer(3);
  });
  after(() => server.close());

  /** Whether the request `p` has been granted, once the server holds `queued` requests waiting. */
  const grantedOnceQueued = async (p: Promise<unknown>, queued: number) => {
    let granted = false;
    void p.then(() => {
      granted = true;
    });
    await eventually(async () => server.stats().queued === queued, 5_000, 10);
    return granted;
  };

  it("grants up to the cap at once and makes the next wait until one is given back", async () => {
    const a = await acquireSlots(1, server.url);
    const b = await acquireSlots(2, server.url);
    const c = acquireSlots(1, server.url);
    assert.equal(await grantedOnceQueued(c, 1), false, "the fourth slot waits");
    a();
    (await c)();
    b();
  });

  it("serves waiting requests in the order they came: a wide one is not overtaken by narrow ones", async () => {
    const held = await acquireSlots(2, server.url);
    const wide = acquireSlots(3, server.url);
    const narrow = acquireSlots(1, server.url);
    assert.equal(await grantedOnceQueued(narrow, 2), false, "the narrow request waits behind the wide one");
    held();
    const releaseWide = await wide;
    assert.equal(await grantedOnceQueued(narrow, 1), false);
    releaseWide();
    (await narrow)();
    assert.ok(server.stats().mostHeld <= 3);
  });

  it("takes back the slots of a process that dies holding them", async () => {
    const holder = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { acquireSlots } from ${JSON.stringify(new URL("./stack-slots.ts", import.meta.url).href)};
         await acquireSlots(3, ${JSON.stringify(server.url)}); console.log("held"); setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((r) => holder.stdout.once("data", () => r()));
    const next = acquireSlots(1, server.url);
    assert.equal(await grantedOnceQueued(next, 1), false, "all three are held by the other process");
    holder.kill("SIGKILL");
    (await next)();
  });
});
