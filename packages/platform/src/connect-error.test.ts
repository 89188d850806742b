import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "@hb/contracts/hb/platform/v1/error_pb";
import fc from "fast-check";
import { connectError, connectErrorFrom } from "./connect-error.ts";

/** What a caller can read of a ConnectError. */
const seen = (e: ConnectError) => ({
  isConnectError: e instanceof ConnectError,
  isError: e instanceof Error,
  prototype: Object.getPrototypeOf(e) === ConnectError.prototype,
  name: e.name,
  message: e.message,
  rawMessage: e.rawMessage,
  code: e.code,
  details: e.details,
  cause: e.cause,
  isWireError: e.isWireError,
  info: e.findDetails(ErrorInfoSchema).map((i) => i.code),
  metadata: [...e.metadata.entries()],
  keys: Object.keys(e).sort(),
  stackHead: e.stack?.split("\n")[0],
});

const codes = Object.values(Code).filter((c): c is Code => typeof c === "number");

describe("ConnectErrors made without undici", () => {
  it("read the same as the ConnectError the constructor makes, for any message, code and detail", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom(...codes),
        fc.option(fc.string()),
        (message, code, infoCode) => {
          const details =
            infoCode === null
              ? []
              : [{ desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { code: infoCode }) }];
          const cause = new Error("cause");
          assert.deepEqual(
            seen(connectError(message, code, details, cause)),
            seen(new ConnectError(message, code, undefined, details, cause)),
          );
        },
      ),
    );
  });

  it("are made from anything thrown as ConnectError.from makes them", () => {
    const abort = new Error("stopped");
    abort.name = "AbortError";
    const existing = new ConnectError("kept", Code.NotFound);
    for (const reason of [new Error("plain"), abort, "a string", 42, existing]) {
      assert.deepEqual(seen(connectErrorFrom(reason)), seen(ConnectError.from(reason)));
      assert.deepEqual(
        seen(connectErrorFrom(reason, Code.Internal)),
        seen(ConnectError.from(reason, Code.Internal)),
      );
    }
    assert.equal(connectErrorFrom(existing), existing);
  });

  it("keep a stack that starts at their maker's caller", () => {
    const e = connectError("where", Code.Internal);
    assert.match(e.stack ?? "", /^ConnectError: \[internal\] where\n {4}at .*connect-error\.test\.ts/);
  });
});
