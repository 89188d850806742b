import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { newId } from "@hb/platform";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { eventually } from "./helpers.ts";
import type { OwnStack } from "./own-stack.ts";
import { stackClient } from "./support/clients.ts";
import { natsFaultStack } from "./support/nats-fault-stack.ts";
import type { PrivateServer } from "./support/private-servers.ts";
import { publishServiceEvent, serviceEventReceiver } from "./support/service-events.ts";

// The stack runs on its own NATS server (started from the machine's binary on a free port, its
// JetStream store in a temporary directory), so killing it disturbs no other test. It is the stack
// the start-up outage suite used before (test/faults.test.ts).
describe("a NATS restart", () => {
  let nats: PrivateServer;
  let s: OwnStack;
  const receiver = serviceEventReceiver();
  const seen = receiver.seen; // serviceId → X-Webhook-Ids

  before(async () => {
    ({ nats, s } = await natsFaultStack());
    // The start-up outage suite before this one starts NATS; if it stopped before that, start it here.
    if (!(await nats.isUp())) await nats.start();
    await receiver.listen();
  });
  after(async () => {
    receiver.close();
  });

  it("in the middle of a burst of events loses none and delivers each once", async () => {
    const { customer } = await s.auth.createCustomer({ name: "Q", email: "q@example.test", currency: "EUR" });
    const partnerId = customer!.id;
    await s.auth.createPartner({ customerId: partnerId, status: PartnerStatus.ACTIVE });
    const port = receiver.port();
    const webhooks = stackClient(s.stack.env, [WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR", 5000);
    await webhooks.client.updateProgrammeSettings({ addAllowedDestinations: [`127.0.0.1:${port}`] });
    await webhooks.client.setWebhookUrl({ partnerId, url: `http://127.0.0.1:${port}/` });
    webhooks.close();
    const ns = s.stack.env.HB_NS;
    const ids: string[] = [];
    const publishBurst = async (n: number) => {
      const nc = await connect({ servers: nats.url });
      const js = jetstream(nc);
      for (let i = 0; i < n; i++) {
        const serviceId = newId();
        ids.push(serviceId);
        await publishServiceEvent(js, ns, partnerId, { type: "service.unsuspended", serviceId });
      }
      await nc.close();
    };
    await publishBurst(100);
    await nats.kill();
    await nats.start();
    await publishBurst(100);
    await eventually(async () => ids.every((id) => seen.has(id)), 60_000, 200);
    for (const id of ids) assert.equal(seen.get(id)!.size, 1, `one X-Webhook-Id for ${id}`);
    // The stack keeps serving after the restart.
    assert.equal((await fetch(`${s.stack.gatewayUrl}/healthz`)).status, 200);
  });
});
