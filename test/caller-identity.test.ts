import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { stackClient } from "./support/clients.ts";

/** A counter of auth's metrics (its samples carry the registry's default labels, or none). */
async function authCounter(name: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${process.env.AUTH_METRICS_PORT}/metrics`);
  const line = (await res.text())
    .split("\n")
    .find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("the caller's identity on internal calls", () => {
  it("is read from its certificate once per connection, not once per call", async () => {
    // A client of its own: one new connection to auth.
    const { client, close } = stackClient(process.env, [AuthStaffService], "AUTH_ADDR", 10_000, "admin");
    try {
      await client.getSettings({});
      const before = await authCounter("rpc_peer_certificate_reads_total");
      assert.ok(before >= 1, "the new connection's certificate was read");
      for (let i = 0; i < 30; i++) await client.getSettings({});
      const reads = (await authCounter("rpc_peer_certificate_reads_total")) - before;
      // Other test files open connections of their own meanwhile; 30 calls read it 30 times before.
      assert.ok(reads < 30, `${reads} certificate reads for 30 calls on one connection`);
    } finally {
      close();
    }
  });
});
