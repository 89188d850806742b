import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { resolveError } from "./errors.ts";
import { isDependencyUnavailable } from "./unavailable.ts";

const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });

describe("isDependencyUnavailable", () => {
  it("recognises refused and dropped connections, however deep the driver wrapped them", () => {
    assert.ok(isDependencyUnavailable(withCode("ECONNREFUSED")));
    assert.ok(isDependencyUnavailable(new Error("query failed", { cause: withCode("ECONNRESET") })));
    assert.ok(isDependencyUnavailable(new AggregateError([new Error("a"), withCode("ETIMEDOUT")])));
  });

  it("recognises postgres.js connection codes and the SQLSTATEs of a server going away", () => {
    for (const code of ["CONNECTION_CLOSED", "CONNECT_TIMEOUT", "57P01", "57P03", "08006", "53300"])
      assert.ok(isDependencyUnavailable(withCode(code)), code);
  });

  it("recognises ioredis giving up and nats.js losing its connection", () => {
    assert.ok(isDependencyUnavailable(new Error("Connection is closed.")));
    assert.ok(isDependencyUnavailable(Object.assign(new Error("m"), { name: "MaxRetriesPerRequestError" })));
    assert.ok(isDependencyUnavailable(Object.assign(new Error("closed"), { name: "ClosedConnectionError" })));
  });

  it("leaves bugs and data errors alone", () => {
    assert.ok(!isDependencyUnavailable(new TypeError("x is undefined")));
    assert.ok(!isDependencyUnavailable(withCode("23505", "duplicate key")));
    assert.ok(!isDependencyUnavailable(withCode("22P02", "invalid input syntax")));
    assert.ok(!isDependencyUnavailable(undefined));
  });

  it("makes resolveError answer 503 with the generic message, not 500", () => {
    const r = resolveError(withCode("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:6379"));
    assert.equal(r.status, 503);
    assert.equal(r.code, "SERVICE_UNAVAILABLE");
    assert.doesNotMatch(r.message, /6379|ECONNREFUSED/);
    assert.equal(resolveError(new TypeError("bug")).status, 500);
  });
});
