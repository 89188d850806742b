import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { type ResolvedError, resolveError } from "@hb/platform";
import { auth, grpc, newPartner, signed } from "./helpers.ts";

// Request rules declared in the contract (buf.validate annotations in proto/hb/*/v1/*.proto) are
// checked by the serving side before any handler: the same refusal reaches a partner over HTTP
// and any internal caller over gRPC.

const webhooks = grpc(WebhooksService, "WEBHOOKS_ADDR");

async function refusal(call: Promise<unknown>): Promise<ResolvedError> {
  try {
    await call;
  } catch (err) {
    return resolveError(err);
  }
  assert.fail("expected a refusal");
}

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
});
