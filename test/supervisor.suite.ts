import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Health, HealthCheckResponse_ServingStatus } from "@hb/contracts/grpc/health/v1/health_pb";
import { rpcClient } from "@hb/platform";
import type { Stack } from "../scripts/stack.ts";
import { eventually } from "./helpers.ts";
import { identity } from "./support/clients.ts";
import { faultStack, supervisorRestarts } from "./support/fault-stack.ts";

// npm start runs the stack under supervision: a service that dies is started again, alone.
describe("the supervised stack npm start runs", () => {
  let stack: Stack;
  // The supervisor's restarts from this suite on (an earlier suite on the stack may have caused some).
  let seenBefore = 0;
  const restarts = () => supervisorRestarts.slice(seenBefore);

  before(async () => {
    stack = (await faultStack()).stack;
    seenBefore = supervisorRestarts.length;
  });

  const serving = async (addr: string) => {
    const { client, close } = rpcClient("grpc-js", Health, addr, {
      timeoutMs: 1000,
      tls: identity(stack.env, "admin"),
    });
    try {
      return (await client.check({})).status === HealthCheckResponse_ServingStatus.SERVING;
    } finally {
      close();
    }
  };

  it("starts a killed backend again while the others keep serving", async () => {
    const before = stack.procs.get("compute")!;
    before.kill("SIGKILL");
    await eventually(async () => before.exitCode !== null || before.signalCode !== null, 10_000);
    assert.ok(await serving(stack.env.AUTH_ADDR), "auth is untouched");
    assert.ok((await fetch(`${stack.gatewayUrl}/healthz`)).ok, "the gateway still answers");
    await eventually(
      async () => stack.procs.get("compute") !== before && (await serving(stack.env.COMPUTE_ADDR)),
      20_000,
      200,
    );
    assert.deepEqual(restarts(), ["compute"]);
  });

  it("starts a killed gateway again", async () => {
    const before = stack.procs.get("gateway")!;
    before.kill("SIGKILL");
    await eventually(
      async () => stack.procs.get("gateway") !== before && (await fetch(`${stack.gatewayUrl}/healthz`)).ok,
      20_000,
      200,
    );
    assert.deepEqual(restarts(), ["compute", "gateway"]);
  });
});
