/**
 * How often the job loop looks for due jobs: with nothing in hand, once per idle interval instead of
 * every tick. Time is simulated, and the database is a stand-in that counts the claim statements.
 */
import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { createLogger, type Sql } from "@hb/platform";
import { createJobs } from "./jobs.ts";

describe("job loop", () => {
  it("claims once per idle interval while no job is near, instead of every tick", async () => {
    mock.timers.enable({ apis: ["setTimeout", "Date"] });
    try {
      let claims = 0;
      const sql = {
        unsafe: async () => {
          claims++;
          return [];
        },
      } as unknown as Sql;
      const loop = createJobs(sql, "loop-test", {}).startLoop(createLogger("test"), 100, 1000);
      const settle = () => new Promise((r) => setImmediate(r));
      for (let t = 0; t < 10_000; t += 50) {
        await settle();
        mock.timers.tick(50);
      }
      await settle();
      // Ten simulated seconds: 11 claims at one a second (100 at one a tick).
      assert.ok(claims >= 10 && claims <= 12, `${claims} claims in 10 s`);
      const stopped = loop.stop();
      await settle();
      await stopped;
    } finally {
      mock.timers.reset();
    }
  });

  it("looks every tick from a job's acceptance until two seconds past its first check", async () => {
    mock.timers.enable({ apis: ["setTimeout", "Date"] });
    try {
      let claims = 0;
      const sql = {
        unsafe: async () => {
          claims++;
          return [];
        },
      } as unknown as Sql;
      const drivers = { probe: { firstCheckMs: () => 500 } } as unknown as Parameters<typeof createJobs>[2];
      const jobs = createJobs(sql, "loop-test", drivers);
      const settle = () => new Promise((r) => setImmediate(r));
      const run = async (ms: number) => {
        for (let t = 0; t < ms; t += 50) {
          await settle();
          mock.timers.tick(50);
        }
        await settle();
      };
      const loop = jobs.startLoop(createLogger("test"), 100, 1000);
      await run(3000);
      const idle = claims;
      // The jobs' insert answers a row for each id it was given (its first parameter).
      const tx = {
        unsafe: async (_text: string, params: unknown[]) => (params[0] as string[]).map((id) => ({ id })),
      } as unknown as Parameters<typeof jobs.accept>[0];
      await jobs.accept(tx, { service_id: "s", customer_id: "c", provider: "probe" }, "start", "running");
      claims = 0;
      // Busy for 0.5 + 2 s: about 25 ticks; the pending idle wait ends first (up to 1 s).
      await run(2500);
      assert.ok(idle <= 4, `${idle} claims in 3 idle seconds`);
      assert.ok(claims >= 14, `${claims} claims in the 2.5 s after a job was accepted`);
      const stopped = loop.stop();
      await settle();
      await stopped;
    } finally {
      mock.timers.reset();
    }
  });
});
