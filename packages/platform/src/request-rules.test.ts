import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import {
  CreateKeyRequestSchema,
  GetSettingsRequestSchema,
  SetCustomerStatusRequestSchema,
  UpdateSettingsRequestSchema,
  VerifyRequestSchema,
} from "@hb/contracts/hb/auth/v1/auth_pb";
import { SetWebhookUrlRequestSchema } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { resolveError } from "./errors.ts";
import { requestCheck } from "./request-rules.ts";

const id = "0195e3a4-5c6d-7e7f-8a9b-0c1d2e3f4a5b";

/** The fields a request is refused for ([] when it passes). */
function refusedFields<D extends Parameters<typeof requestCheck>[0]>(desc: D, init: object): string[] {
  try {
    requestCheck(desc)?.(create(desc, init as never));
    return [];
  } catch (err) {
    const r = resolveError(err);
    assert.equal(r.code, "BAD_REQUEST");
    return r.info?.violations.map((v) => v.field) ?? [];
  }
}

const utcDay = (offsetDays: number, hour = 0) => {
  const d = new Date();
  return timestampFromDate(
    new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + offsetDays, hour)),
  );
};

describe("request rules", () => {
  it("cost nothing on a method whose request declares none (auth.Verify, the hot path)", () => {
    assert.equal(requestCheck(VerifyRequestSchema), undefined);
    assert.equal(requestCheck(GetSettingsRequestSchema), undefined);
  });

  it("check ids, text, ranges and enums as declared", () => {
    assert.deepEqual(refusedFields(CreateKeyRequestSchema, { personId: id, label: "ci" }), []);
    assert.deepEqual(refusedFields(CreateKeyRequestSchema, { personId: "", label: "x".repeat(101) }), [
      "person_id",
      "label",
    ]);
    assert.deepEqual(refusedFields(UpdateSettingsRequestSchema, {}), [], "unset optional fields pass");
    assert.deepEqual(refusedFields(UpdateSettingsRequestSchema, { activeKeyLimit: 1001 }), [
      "active_key_limit",
    ]);
    assert.deepEqual(refusedFields(SetCustomerStatusRequestSchema, { customerId: id }), ["status"]);
    assert.deepEqual(refusedFields(SetCustomerStatusRequestSchema, { customerId: id, status: 7 }), [
      "status",
    ]);
    assert.deepEqual(
      refusedFields(SetCustomerStatusRequestSchema, { customerId: id, status: CustomerStatus.SUSPENDED }),
      [],
    );
  });

  it("take an expiry date only as 00:00 UTC of today or a later day", () => {
    const key = (expiresOn: ReturnType<typeof utcDay>) =>
      refusedFields(CreateKeyRequestSchema, { personId: id, label: "x", expiresOn });
    assert.deepEqual(key(utcDay(0)), []);
    assert.deepEqual(key(utcDay(30)), []);
    assert.deepEqual(key(utcDay(-1)), ["expires_on"]);
    assert.deepEqual(key(utcDay(30, 12)), ["expires_on"]);
  });

  it("take a webhook URL with an http or https scheme in any letter case, or empty", () => {
    const url = (u: string) => refusedFields(SetWebhookUrlRequestSchema, { partnerId: id, url: u });
    for (const ok of ["", "https://hooks.example.com/x", "HTTP://example.com", " http://example.com"]) {
      assert.deepEqual(url(ok), [], ok);
    }
    for (const bad of ["ftp://example.com", "example.com/hook", "javascript:alert(1)", "https:/x"]) {
      assert.deepEqual(url(bad), ["url"], bad);
    }
    assert.deepEqual(url(`https://example.com/${"a".repeat(2000)}`), ["url"]);
  });
});
