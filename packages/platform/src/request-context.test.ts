import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultTextMapGetter, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import fc from "fast-check";
import { isWellFormedRequestId, requestIdOf, traceparentOf } from "./request-context.ts";
import { beginContext, parseTraceparent, SpanKind } from "./tracing.ts";

const safe = fc.constantFrom(..."ABCXYZabcxyz0189._:-".split(""));

describe("request id", () => {
  it("keeps a caller's id of 1 to 128 letters, digits, '.', '_', ':' or '-' as it is", () => {
    fc.assert(
      fc.property(fc.string({ unit: safe, minLength: 1, maxLength: 128 }), (id) => {
        assert.equal(requestIdOf(id), id);
      }),
    );
  });

  it("replaces a missing, empty, too long or unsafe id with a new well-formed one", () => {
    const unsafe = fc.oneof(
      fc.string({ unit: safe, minLength: 129, maxLength: 300 }),
      fc
        .tuple(
          fc.string({ unit: safe }),
          fc.constantFrom(" ", "\n", "\r", '"', "/", "é", "\u0000", "{"),
          fc.string({ unit: safe }),
        )
        .map(([a, bad, b]) => a + bad + b),
    );
    fc.assert(
      fc.property(unsafe, (id) => {
        const replaced = requestIdOf(id);
        assert.notEqual(replaced, id);
        assert.match(replaced, /^req_[0-9a-f-]{36}$/);
        assert.ok(isWellFormedRequestId(replaced));
      }),
    );
    for (const none of [undefined, null, ""]) assert.match(requestIdOf(none), /^req_/);
    assert.notEqual(requestIdOf(undefined), requestIdOf(undefined), "a new id each time");
  });
});

describe("traceparent", () => {
  it("round-trips a context's ids and sampled flag", () => {
    const hex = (n: number) =>
      fc.string({ unit: fc.constantFrom(..."0123456789abcdef".split("")), minLength: n, maxLength: n });
    fc.assert(
      fc.property(hex(32), hex(16), fc.constantFrom(0, 1), (traceId, spanId, traceFlags) => {
        fc.pre(!/^0+$/.test(traceId) && !/^0+$/.test(spanId));
        const parsed = parseTraceparent(traceparentOf({ requestId: "r", traceId, spanId, traceFlags }));
        assert.deepEqual(
          [parsed?.traceId, parsed?.spanId, parsed?.traceFlags],
          [traceId, spanId, traceFlags],
        );
      }),
    );
  });

  it("is well formed for new contexts and their children, which keep the trace id", () => {
    for (let i = 0; i < 200; i++) {
      const root = beginContext("root", SpanKind.SERVER, {});
      const parsed = parseTraceparent(traceparentOf(root));
      assert.deepEqual([parsed?.traceId, parsed?.spanId], [root.traceId, root.spanId], traceparentOf(root));
      const child = beginContext("child", SpanKind.SERVER, { traceparent: traceparentOf(root) });
      assert.equal(child.traceId, root.traceId);
      assert.notEqual(child.spanId, root.spanId);
    }
  });

  it("ignores a malformed traceparent", () => {
    for (const bad of ["", "00-xyz", `00-${"0".repeat(32)}-${"1".repeat(16)}-01`, "garbage-in"])
      assert.equal(parseTraceparent(bad), undefined, bad);
  });

  it("reads a traceparent as the OpenTelemetry W3C propagator does", () => {
    const propagator = new W3CTraceContextPropagator();
    const viaSdk = (value: string) => {
      const sc = trace.getSpanContext(
        propagator.extract(ROOT_CONTEXT, { traceparent: value }, defaultTextMapGetter),
      );
      return sc && [sc.traceId, sc.spanId, sc.traceFlags];
    };
    const hexDigit = fc.constantFrom(..."0123456789abcdefF-x ".split(""));
    const part = (n: number) =>
      fc.oneof(
        fc.string({ unit: fc.constantFrom(..."0123456789abcdef".split("")), minLength: n, maxLength: n }),
        fc.constant("0".repeat(n)),
        fc.string({ unit: hexDigit, minLength: n - 1, maxLength: n + 1 }),
      );
    const traceparent = fc
      .tuple(
        fc.constantFrom("00", "01", "ff", "0"),
        part(32),
        part(16),
        part(2),
        fc.constantFrom("", "-extra", " "),
      )
      .map(([v, t, s, f, tail]) => `${v}-${t}-${s}-${f}${tail}`);
    fc.assert(
      fc.property(traceparent, (value) => {
        const mine = parseTraceparent(value);
        assert.deepEqual(mine && [mine.traceId, mine.spanId, mine.traceFlags], viaSdk(value), value);
      }),
      { numRuns: 2000 },
    );
  });
});
