/**
 * The package as shipped (dist/, what partners copy) against deliveries and requests built by
 * hand from the scheme in docs/webhooks.md, not by the package itself.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import {
  resellerSignatureMatches,
  signResellerRequest,
  signWebhookBody,
  verifyWebhook,
  WebhookVerificationError,
} from "../dist/index.js";

const secret = "whsec_test_0123456789";
const hmac = (key: string, text: string) =>
  `hmac-sha256=${createHmac("sha256", key).update(text).digest("hex")}`;

/** A delivery as the platform sends it, signed by hand. */
function delivery(at = new Date(), key = secret) {
  const timestamp = at.toISOString();
  const body = JSON.stringify({ event: "order.paid", timestamp, data: { orderId: "o-1", amount: 12.5 } });
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-webhook-id": "0195e3a4-5c6d-7e7f-8a9b-0c1d2e3f4a5b",
    "x-webhook-event": "order.paid",
    "x-webhook-timestamp": timestamp,
    "x-webhook-signature": hmac(key, body),
  };
  return { body, headers };
}

const refusal = (code: string) => (err: unknown) => {
  assert.ok(err instanceof WebhookVerificationError, String(err));
  assert.equal(err.code, code);
  assert.doesNotMatch(err.message, new RegExp(secret), "the secret never appears in an error");
  return true;
};

describe("verifyWebhook", () => {
  it("accepts a delivery signed with the secret and returns its id, event, time and data", () => {
    const { body, headers } = delivery();
    const v = verifyWebhook<{ orderId: string; amount: number }>({ body, headers, secret });
    assert.equal(v.id, headers["x-webhook-id"]);
    assert.equal(v.event, "order.paid");
    assert.equal(v.timestamp, headers["x-webhook-timestamp"]);
    assert.deepEqual(v.data, { orderId: "o-1", amount: 12.5 });
  });

  it("reads the raw body as bytes and the headers from a Fetch Headers or in any letter case", () => {
    const { body, headers } = delivery();
    assert.equal(
      verifyWebhook({ body: Buffer.from(body), headers: new Headers(headers), secret }).event,
      "order.paid",
    );
    const shouting = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    assert.equal(verifyWebhook({ body, headers: shouting, secret }).event, "order.paid");
  });

  it("refuses a tampered body, and the same body re-serialised", () => {
    const { body, headers } = delivery();
    assert.throws(
      () => verifyWebhook({ body: body.replace("12.5", "1250"), headers, secret }),
      refusal("bad_signature"),
    );
    const reformatted = JSON.stringify(JSON.parse(body), null, 2);
    assert.throws(() => verifyWebhook({ body: reformatted, headers, secret }), refusal("bad_signature"));
  });

  it("refuses a delivery signed with the secret from before a rotation", () => {
    const { body, headers } = delivery(new Date(), "whsec_the_old_one");
    assert.throws(() => verifyWebhook({ body, headers, secret }), refusal("bad_signature"));
  });

  it("refuses a genuine delivery replayed after the tolerance, and one from the future", () => {
    const { body, headers } = delivery(new Date(Date.now() - 301_000));
    assert.throws(() => verifyWebhook({ body, headers, secret }), refusal("stale_timestamp"));
    assert.equal(verifyWebhook({ body, headers, secret, toleranceSeconds: 600 }).event, "order.paid");
    const ahead = delivery(new Date(Date.now() + 301_000));
    assert.throws(() => verifyWebhook({ ...ahead, secret }), refusal("stale_timestamp"));
  });

  it("judges the signed time: a fresh X-Webhook-Timestamp on an old body is refused", () => {
    const { body, headers } = delivery(new Date(Date.now() - 3_600_000));
    const fresh = { ...headers, "x-webhook-timestamp": new Date().toISOString() };
    assert.throws(() => verifyWebhook({ body, headers: fresh, secret }), refusal("invalid_payload"));
    // One delivery for both parts: two calls a millisecond apart would sign different bodies.
    const genuine = delivery();
    const relabelled = { ...genuine.headers, "x-webhook-event": "order.invoiced" };
    assert.throws(
      () => verifyWebhook({ body: genuine.body, headers: relabelled, secret }),
      refusal("invalid_payload"),
    );
  });

  it("names a missing header", () => {
    for (const name of ["x-webhook-signature", "x-webhook-id", "x-webhook-timestamp", "x-webhook-event"]) {
      const { body, headers } = delivery();
      delete headers[name];
      assert.throws(
        () => verifyWebhook({ body, headers, secret }),
        (err: unknown) =>
          refusal("missing_header")(err) && (err as Error).message.toLowerCase().includes(name),
      );
    }
  });

  it("agrees with the platform's signer", () => {
    const { body } = delivery();
    assert.equal(signWebhookBody(body, secret), hmac(secret, body));
  });
});

describe("signResellerRequest", () => {
  it("signs <timestamp>.<raw body> and stamps the current Unix time by default", () => {
    const body = JSON.stringify({ webhookUrl: "https://hooks.example.com/x" });
    const h = signResellerRequest({ body, secret, timestamp: 1_700_000_000 });
    assert.deepEqual(h, {
      "X-Reseller-Timestamp": "1700000000",
      "X-Reseller-Signature": hmac(secret, `1700000000.${body}`),
    });
    const now = signResellerRequest({ secret });
    assert.ok(Math.abs(Number(now["X-Reseller-Timestamp"]) - Date.now() / 1000) < 5);
    assert.equal(now["X-Reseller-Signature"], hmac(secret, `${now["X-Reseller-Timestamp"]}.`));
  });

  it("is what the platform's check accepts, and only with the same body and secret", () => {
    const h = signResellerRequest({ body: "{}", secret, timestamp: "1700000000" });
    const sig = h["X-Reseller-Signature"];
    assert.ok(resellerSignatureMatches("{}", secret, "1700000000", sig));
    assert.ok(!resellerSignatureMatches('{"a":1}', secret, "1700000000", sig));
    assert.ok(!resellerSignatureMatches("{}", "whsec_other", "1700000000", sig));
    assert.ok(!resellerSignatureMatches("{}", secret, "1700000001", sig));
    assert.ok(!resellerSignatureMatches("{}", secret, "1700000000", ""));
  });
});

describe("the shipped dist/", () => {
  it("is what src/index.ts builds to (run `npm run build -w @hb/webhook-signature` after a change)", () => {
    const pkg = path.join(import.meta.dirname, "..");
    const out = mkdtempSync(path.join(tmpdir(), "webhook-signature-"));
    try {
      const tsc = path.join(pkg, "../../node_modules/typescript/bin/tsc");
      execFileSync(process.execPath, [tsc, "-p", path.join(pkg, "tsconfig.build.json"), "--outDir", out]);
      for (const file of ["index.js", "index.d.ts"]) {
        assert.equal(
          readFileSync(path.join(pkg, "dist", file), "utf8"),
          readFileSync(path.join(out, file), "utf8"),
          `dist/${file} is stale`,
        );
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
