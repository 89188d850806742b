import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import { MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import { newId } from "@hb/platform";
import { addCredit, api, eventually, grpc, newAccount, newProduct } from "./helpers.ts";

const computeAsBilling = grpc([ComputeProvisioningService], "COMPUTE_ADDR", "billing");
const computeAsGateway = grpc([ComputeService], "COMPUTE_ADDR", "gateway");

const request = (serviceId: string, customerId: string) => ({
  serviceId,
  customerId,
  kind: MachineKind.GAME,
  hostname: `batch-${serviceId.slice(-6)}`,
});

/** ProvisionBatch calls compute has answered OK, from its metrics. */
async function batchCalls(): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${process.env.COMPUTE_METRICS_PORT}/metrics`);
  const line = (await res.text())
    .split("\n")
    .find(
      (l) =>
        l.startsWith("rpc_server_handled_total{") &&
        l.includes('method="/hb.compute.v1.ComputeProvisioningService/ProvisionBatch"') &&
        l.includes('code="OK"'),
    );
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("provisioning in batches", () => {
  it("builds every service of a batch, answers in request order, and answers a repeat with the same build jobs", async () => {
    const customerId = newId();
    const [a, b, c, d] = [newId(), newId(), newId(), newId()];
    const first = await computeAsBilling.provisionBatch({
      requests: [request(a, customerId), request(b, customerId), request(c, customerId)],
    });
    assert.deepEqual(
      first.results.map((r) => [r.serviceId, r.error]),
      [
        [a, ""],
        [b, ""],
        [c, ""],
      ],
    );
    const jobs = new Map(first.results.map((r) => [r.serviceId, r.jobId]));
    assert.equal(new Set(jobs.values()).size, 3, "one build job per service");
    for (const id of jobs.values()) assert.ok(id, "a job id for each new service");

    // A repeat (here mixed with a new service) records nothing twice: the same jobs come back.
    const again = await computeAsBilling.provisionBatch({
      requests: [request(c, customerId), request(d, customerId), request(a, customerId)],
    });
    assert.deepEqual(
      again.results.map((r) => r.serviceId),
      [c, d, a],
    );
    assert.equal(again.results[0].jobId, jobs.get(c));
    assert.equal(again.results[2].jobId, jobs.get(a));
    assert.ok(again.results[1].jobId && again.results[1].jobId !== jobs.get(a));
    // Provision alone agrees with the batch about the same service.
    assert.equal((await computeAsBilling.provision(request(b, customerId))).jobId, jobs.get(b));

    for (const serviceId of [a, b, c, d]) {
      const status = await eventually(async () => {
        const s = await computeAsGateway.getProvisionStatus({
          caller: { customerId },
          serviceId,
          kind: MachineKind.GAME,
        });
        return s.job?.status === JobStatus.SUCCEEDED ? s : undefined;
      });
      assert.equal(status.job?.action, "build");
    }
  });

  it("refuses an empty batch and one of more than 100 services before any handler", async () => {
    await assert.rejects(computeAsBilling.provisionBatch({ requests: [] }), /requests/);
    const customerId = newId();
    const many = Array.from({ length: 101 }, () => request(newId(), customerId));
    await assert.rejects(computeAsBilling.provisionBatch({ requests: many }), /requests/);
  });

  it("billing asks for an order's services with ProvisionBatch, and they become active", async () => {
    const acct = await newAccount();
    await addCredit(acct, "100");
    const product = await newProduct("game", { monthly: "1" });
    const before = await batchCalls();
    const items = Array.from({ length: 5 }, () => ({ productId: product.id, billingCycle: "monthly" }));
    const r = await api("POST", "/api/v1/orders", { key: acct.key, body: { items } });
    assert.equal(r.status, 201, r.text);
    for (const s of r.body.data.services as { id: string }[]) {
      await eventually(async () => {
        const got = await api("GET", `/api/v1/services/${s.id}`, { key: acct.key });
        return got.body.data?.status === "active" ? true : undefined;
      });
    }
    // Other tests' orders are built by the same passes, so only the method is checked here; the
    // batch's own behaviour is the test above.
    assert.ok((await batchCalls()) > before, "billing called ProvisionBatch");
  });
});
