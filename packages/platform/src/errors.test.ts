import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { apiError, errorCodes, resolveError } from "./errors.ts";

describe("error model", () => {
  it("maps every spec code to its HTTP status", () => {
    const expected: Record<string, number> = {
      BAD_REQUEST: 400,
      UNAUTHORIZED: 401,
      SCOPE_REQUIRED: 403,
      FORBIDDEN: 403,
      ACCOUNT_SUSPENDED: 403,
      ACTION_NOT_ALLOWED: 403,
      FEATURE_DISABLED: 403,
      NOT_FOUND: 404,
      CONFLICT: 409,
      PROVIDER_ERROR: 424,
      RATE_LIMITED: 429,
      ACTION_RATE_LIMITED: 429,
    };
    for (const [code, status] of Object.entries(expected)) {
      assert.equal(errorCodes[code as keyof typeof errorCodes].http, status, code);
      assert.equal(resolveError(apiError(code as keyof typeof errorCodes, "m")).status, status, code);
    }
  });

  it("keeps field details and the scope across the wire shape", () => {
    const r = resolveError(
      apiError("BAD_REQUEST", "bad", { violations: [{ field: "password", message: "too short" }] }),
    );
    assert.equal(r.code, "BAD_REQUEST");
    assert.deepEqual(
      r.info?.violations.map((v) => [v.field, v.message]),
      [["password", "too short"]],
    );
    assert.equal(resolveError(apiError("SCOPE_REQUIRED", "x", { scope: "billing" })).info?.scope, "billing");
  });

  it("hides internal detail behind a generic message", () => {
    const r = resolveError(new Error("connection string postgres://secret@db"));
    assert.equal(r.status, 500);
    assert.equal(r.code, "INTERNAL_ERROR");
    assert.ok(!r.message.includes("secret"));
    const unavailable = resolveError(new ConnectError("dial tcp 10.0.0.1 refused", Code.Unavailable));
    assert.equal(unavailable.status, 503);
    assert.ok(!unavailable.message.includes("10.0.0.1"));
  });

  it("falls back on the transport code when no detail came with it", () => {
    assert.equal(resolveError(new ConnectError("x", Code.NotFound)).code, "NOT_FOUND");
    assert.equal(resolveError(new ConnectError("x", Code.InvalidArgument)).status, 400);
    assert.equal(resolveError(new ConnectError("x", Code.DeadlineExceeded)).status, 503);
  });
});
