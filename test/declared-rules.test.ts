import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AddonBillingType } from "@hb/contracts/hb/billing/v1/addons_pb";
import type { ProductKind } from "@hb/contracts/hb/billing/v1/common_pb";
import { DocumentKind } from "@hb/contracts/hb/billing/v1/documents_pb";
import { OrderPaymentMode } from "@hb/contracts/hb/billing/v1/orders_pb";
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { PowerAction } from "@hb/contracts/hb/compute/v1/actions_pb";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import type { JobStatus } from "@hb/contracts/hb/compute/v1/jobs_pb";
import { Control, MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { ComputeProvisioningService } from "@hb/contracts/hb/compute/v1/provisioning_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { type ResolvedError, resolveError } from "@hb/platform";
import { auth, billing, compute, grpc, newPartner, signed } from "./helpers.ts";

// Request rules declared in the contract (buf.validate annotations in proto/hb/*/v1/*.proto) are
// checked by the serving side before any handler: the same refusal reaches a partner over HTTP
// and any internal caller over gRPC.

const webhooks = grpc([WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR");
// Compute's customer-facing RPCs are the gateway's to call, Provision billing's.
const computeAsGateway = grpc([ComputeService], "COMPUTE_ADDR", "gateway");
const computeAsBilling = grpc([ComputeProvisioningService], "COMPUTE_ADDR", "billing");

async function refusal(call: Promise<unknown>): Promise<ResolvedError> {
  try {
    await call;
  } catch (err) {
    return resolveError(err);
  }
  assert.fail("expected a refusal");
}

/** The fields a BAD_REQUEST names, in the order the contract declares them. */
async function fields(call: Promise<unknown>) {
  const r = await refusal(call);
  assert.equal(r.code, "BAD_REQUEST", r.message);
  return r.info?.violations.map((v) => v.field);
}

const someId = "0190a7c4-1111-7000-8000-000000000001";

describe("rules declared in the contract", () => {
  it("refuse a webhook URL without an http or https scheme at the HTTP edge and at a direct gRPC call, saving nothing", async () => {
    const p = await newPartner();
    // Other schemes pass the gateway's schema (a string of at most 2000 characters) and parse as
    // URLs: only SetWebhookUrlRequest.url's declared rule refuses them.
    for (const webhookUrl of ["ftp://example.com/x", "gopher://example.com/", "file:///etc/passwd"]) {
      const r = await signed(p, "PUT", "/api/v1/reseller/account/webhook", { webhookUrl });
      assert.equal(r.status, 400, `${webhookUrl}: ${r.text}`);
      assert.equal(r.body.code, "BAD_REQUEST");
      const message = "webhookUrl must be an absolute URL with an explicit http or https scheme";
      assert.equal(r.body.error, message);
      assert.deepEqual(r.body.details, [{ field: "webhookUrl", message }], "named as the partner sent it");

      const direct = await refusal(webhooks.setWebhookUrl({ partnerId: p.customerId, url: webhookUrl }));
      assert.equal(direct.code, "BAD_REQUEST");
      assert.deepEqual(
        direct.info?.violations.map((v) => [v.field, v.message]),
        [["url", "url must be an absolute URL with an explicit http or https scheme"]],
      );
    }
    assert.equal((await webhooks.getWebhook({ partnerId: p.customerId })).url, "");
  });

  it("name every broken field of one request at once, by its contract name", async () => {
    const r = await refusal(webhooks.updateProgrammeSettings({ maxAttempts: 0, baseDelaySeconds: 3601 }));
    assert.equal(r.code, "BAD_REQUEST");
    assert.deepEqual(
      r.info?.violations.map((v) => v.field),
      ["max_attempts", "base_delay_seconds"],
    );
    assert.equal(
      r.message,
      "max_attempts must be an integer from 1 to 10; base_delay_seconds must be an integer from 10 to 3600",
    );
    const key = await refusal(auth.createKey({ personId: "not-a-uuid", label: " \t ", scopes: [] }));
    assert.deepEqual(
      key.info?.violations.map((v) => v.message),
      ["person_id must be a valid UUID", "label is required"],
    );
  });

  it("refuse compute requests with a malformed id, an undefined enum or a value out of range, before any handler", async () => {
    // No caller either: the rules are checked before the handler would refuse it as UNAUTHORIZED.
    const job = await refusal(computeAsGateway.getJob({ jobId: "not-a-uuid" }));
    assert.equal(job.code, "BAD_REQUEST");
    assert.deepEqual(
      job.info?.violations.map((v) => [v.field, v.message]),
      [["job_id", "job_id must be a valid UUID"]],
    );
    const serviceId = someId;
    assert.deepEqual(
      await fields(
        computeAsGateway.runPowerAction({
          serviceId: "7",
          kind: 42 as MachineKind,
          action: PowerAction.START,
        }),
      ),
      ["service_id", "kind"],
    );
    assert.deepEqual(
      await fields(
        computeAsGateway.listJobs({ status: 9 as JobStatus, serviceId: "x", page: -1, limit: 201 }),
      ),
      ["status", "service_id", "page", "limit"],
    );
    assert.deepEqual(await fields(computeAsGateway.restoreBackup({ serviceId, backupId: "b" })), [
      "backup_id",
    ]);
    assert.deepEqual(await fields(computeAsGateway.deleteSnapshot({ serviceId, snapshotId: "s" })), [
      "snapshot_id",
    ]);
    assert.deepEqual(await fields(computeAsGateway.deleteSshKey({ sshKeyId: "k" })), ["ssh_key_id"]);
    assert.deepEqual(
      await fields(computeAsGateway.createSshKey({ name: " ", publicKey: "ssh-ed25519 AAAA" })),
      ["name"],
    );
    assert.deepEqual(await fields(computeAsGateway.describeMachines({ serviceIds: [serviceId, "2"] })), [
      "service_ids[1]",
    ]);
    assert.deepEqual(
      await fields(
        compute.adminCreateMachine({
          serviceId: "s",
          customerId: "c",
          disabledControls: [Control.POWER, Control.UNSPECIFIED],
          vcpus: -1,
        }),
      ),
      ["service_id", "customer_id", "disabled_controls[1]", "vcpus"],
    );
    assert.deepEqual(
      await fields(computeAsBilling.provision({ serviceId, customerId: "c", kind: MachineKind.GAME })),
      ["customer_id"],
    );
  });

  it("refuse billing requests with a malformed id, a missing or undefined enum or a value out of range, before any handler", async () => {
    // No caller: without the rules these would be UNAUTHORIZED (or a database error), not BAD_REQUEST.
    const order = await refusal(billing.getOrder({ orderId: "42" }));
    assert.equal(order.code, "BAD_REQUEST");
    assert.deepEqual(
      order.info?.violations.map((v) => [v.field, v.message]),
      [["order_id", "order_id must be a valid UUID"]],
    );
    assert.deepEqual(
      await fields(billing.listDocuments({ kind: DocumentKind.UNSPECIFIED, page: -1, limit: 201 })),
      ["kind", "page", "limit"],
    );
    assert.deepEqual(
      await fields(
        billing.buyAddon({
          serviceId: "s",
          optionId: "o",
          billingType: AddonBillingType.UNSPECIFIED,
          quantity: 101,
        }),
      ),
      ["service_id", "option_id", "billing_type", "quantity"],
    );
    assert.deepEqual(
      await fields(
        billing.requestUpgrade({ serviceId: someId, toProductId: "p", addOptions: [someId, "z"] }),
      ),
      ["to_product_id", "add_options[1]"],
    );
    assert.deepEqual(await fields(billing.getServiceSummaries({ serviceIds: ["q"] })), ["service_ids[0]"]);
    assert.deepEqual(
      await fields(billing.adminSetServiceState({ serviceId: someId, action: ServiceAction.UNSPECIFIED })),
      ["action"],
    );
    assert.deepEqual(await fields(billing.adminCreateProduct({ name: " ", kind: 9 as ProductKind })), [
      "name",
      "kind",
    ]);
    assert.deepEqual(
      await fields(
        billing.createResellerOrder({ externalOrderId: "", paymentMode: OrderPaymentMode.UNSPECIFIED }),
      ),
      ["external_order_id", "payment_mode"],
    );
    assert.deepEqual(
      await fields(billing.adminAdjustCredit({ personId: "p", customerId: "c", amount: "1" })),
      ["person_id", "customer_id"],
    );
  });
});
