import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createHbClient, type HbClientOptions } from "./client.ts";
import { HbError, isHbError, retryAfterSeconds } from "./errors.ts";
import { defaultRetryPolicy, retryDelayMs } from "./retry.ts";
import type { RetryEvent } from "./transport.ts";

const BASE = "http://api.test";

interface Seen {
  method: string;
  path: string;
  idempotencyKey: string | null;
  authorization: string | null;
  body: string;
}

const ok = (data: unknown, extra: Record<string, unknown> = {}, status = 200) =>
  new Response(JSON.stringify({ success: true, data, ...extra }), {
    status,
    headers: { "content-type": "application/json" },
  });
const refused = (
  status: number,
  code: string,
  more: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) =>
  new Response(JSON.stringify({ success: false, error: `refused: ${code}`, code, ...more }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

/**
 * A client over a scripted fetch: `answer` gets each request (and how many came before it) and
 * answers a Response or throws like a lost connection.
 */
function scripted(
  answer: (req: Seen, n: number) => Response | Promise<Response>,
  opts: Partial<HbClientOptions> = {},
) {
  const seen: Seen[] = [];
  const retries: RetryEvent[] = [];
  const hb = createHbClient({
    baseUrl: BASE,
    apiKey: "hbk_test",
    retry: { baseDelayMs: 1 },
    onRetry: (e) => retries.push(e),
    ...opts,
    fetch: async (req) => {
      const url = new URL(req.url);
      const s: Seen = {
        method: req.method,
        path: url.pathname.replace("/api/v1", "") + url.search,
        idempotencyKey: req.headers.get("idempotency-key"),
        authorization: req.headers.get("authorization"),
        body: await req.text(),
      };
      seen.push(s);
      return answer(s, seen.length - 1);
    },
  });
  return { hb, seen, retries };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const vpsId = "0193a5c2-7d1e-7c4a-9f3b-2e8d6a1b4c5d";

describe("retries", () => {
  it("retries a read answered 5xx, then returns the answer, with the key as a Bearer token", async () => {
    const { hb, seen, retries } = scripted((_r, n) =>
      n < 2 ? refused(503, "SERVICE_UNAVAILABLE") : ok({ balance: 5, currency: "EUR" }),
    );
    const r = await hb.get("/account/balance");
    assert.deepEqual(r.data, { balance: 5, currency: "EUR" });
    assert.equal(seen.length, 3);
    assert.equal(seen[0].authorization, "Bearer hbk_test");
    assert.deepEqual(
      retries.map((e) => [e.attempt, e.status, e.kind]),
      [
        [2, 503, "retry"],
        [3, 503, "retry"],
      ],
    );
  });

  it("gives up after the policy's retries and throws the last refusal, typed by its code", async () => {
    const { hb, seen } = scripted(() => refused(502, "BAD_GATEWAY"));
    await assert.rejects(hb.get("/account/balance"), (e) => isHbError(e, "BAD_GATEWAY") && e.status === 502);
    assert.equal(seen.length, 1 + defaultRetryPolicy.retries);
  });

  it("waits what a 429's Retry-After says, and hands back one that asks longer than the policy allows", async () => {
    const short = scripted((_r, n) =>
      n === 0
        ? refused(429, "RATE_LIMITED", {}, { "retry-after": "0" })
        : ok({ balance: 1, currency: "EUR" }),
    );
    await short.hb.get("/account/balance");
    assert.equal(short.seen.length, 2);

    const long = scripted(() =>
      refused(429, "ACTION_RATE_LIMITED", { retry_after_seconds: 3600 }, { "retry-after": "3600" }),
    );
    await assert.rejects(
      long.hb.post("/vps/{id}/power/{action}", { params: { path: { id: vpsId, action: "reboot" } } }),
      (e) => isHbError(e, "ACTION_RATE_LIMITED") && e.retryAfterSeconds === 3600,
    );
    assert.equal(long.seen.length, 1);
  });

  it("retries a lost connection on a call that moves no money, without an Idempotency-Key", async () => {
    const { hb, seen } = scripted((_r, n) => {
      if (n === 0) throw new TypeError("fetch failed");
      return ok({ completed: false, job_id: vpsId, pending: true });
    });
    const r = await hb.post("/vps/{id}/power/{action}", {
      params: { path: { id: vpsId, action: "reboot" } },
    });
    assert.equal(r.data.job_id, vpsId);
    assert.deepEqual(
      seen.map((s) => [s.method, s.idempotencyKey]),
      [
        ["POST", null],
        ["POST", null],
      ],
    );
  });

  it("retries nothing a 4xx answers", async () => {
    const { hb, seen } = scripted(() =>
      refused(400, "BAD_REQUEST", { details: [{ field: "billingCycle", message: "is required" }] }),
    );
    await assert.rejects(
      hb.post("/orders", { body: { productId: vpsId, billingCycle: "" } }),
      (e) => isHbError(e, "BAD_REQUEST") && e.details[0].field === "billingCycle",
    );
    assert.deepEqual(
      seen.map((s) => s.method),
      ["GET", "POST"],
    );
  });
});

describe("money-moving calls", () => {
  const orderList = (total: number) =>
    ok({ orders: total ? [{ id: `o${total}` }] : [], pagination: { page: 1, limit: 1, total, pages: 1 } });

  it("send an Idempotency-Key, re-read before resending, and resend with the same key when nothing was applied", async () => {
    const { hb, seen, retries } = scripted((r) => {
      if (r.method === "GET") return orderList(0);
      const posts = seen.filter((s) => s.method === "POST").length;
      return posts === 1 ? refused(502, "BAD_GATEWAY") : ok({ settled: true }, {}, 201);
    });
    const r = await hb.post("/orders", { body: { productId: vpsId, billingCycle: "monthly" } });
    assert.deepEqual(r.data, { settled: true });
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.path}`),
      ["GET /orders?limit=1", "POST /orders", "GET /orders?limit=1", "POST /orders"],
    );
    const [first, second] = seen.filter((s) => s.method === "POST");
    assert.match(first.idempotencyKey ?? "", UUID);
    assert.equal(second.idempotencyKey, first.idempotencyKey);
    assert.equal(second.body, first.body);
    assert.deepEqual(
      retries.map((e) => e.kind),
      ["resend"],
    );
  });

  it("give every call its own key, and keep a key the caller chose", async () => {
    const { hb, seen } = scripted((r) =>
      r.method === "GET" ? ok({ status: "unpaid" }) : ok({ creditApplied: 1 }),
    );
    await hb.post("/invoices/{id}/pay", { params: { path: { id: vpsId } }, body: {} });
    await hb.post("/invoices/{id}/pay", { params: { path: { id: vpsId } }, body: {} });
    await hb.post("/invoices/{id}/pay", {
      params: { path: { id: vpsId }, header: { "Idempotency-Key": "mine-1" } },
      body: {},
    });
    const keys = seen.filter((s) => s.method === "POST").map((s) => s.idempotencyKey);
    assert.notEqual(keys[0], keys[1]);
    assert.equal(keys[2], "mine-1");
  });

  it("replay with the same key, only to collect the first answer, when the re-read shows the call took effect", async () => {
    let paid = false;
    const { hb, seen, retries } = scripted((r) => {
      if (r.method === "GET")
        return ok({ id: vpsId, status: paid ? "paid" : "unpaid", amount_paid: paid ? 10 : 0 });
      if (!paid) {
        paid = true; // the payment went through, but the answer was lost
        return refused(504, "INTERNAL_ERROR");
      }
      return ok({ creditApplied: 10, invoice: { status: "paid" } });
    });
    const r = await hb.post("/invoices/{id}/pay", { params: { path: { id: vpsId } }, body: {} });
    assert.equal(r.data.creditApplied, 10);
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.path}`),
      [
        `GET /invoices/${vpsId}`,
        `POST /invoices/${vpsId}/pay`,
        `GET /invoices/${vpsId}`,
        `POST /invoices/${vpsId}/pay`,
      ],
    );
    assert.deepEqual(
      retries.map((e) => e.kind),
      ["replay"],
    );
    const posts = seen.filter((s) => s.method === "POST");
    assert.equal(posts[1].idempotencyKey, posts[0].idempotencyKey);
  });

  it("are never resent when the re-read cannot be made", async () => {
    const { hb, seen } = scripted((r) => {
      if (r.method === "GET") return refused(403, "FORBIDDEN");
      return refused(503, "SERVICE_UNAVAILABLE");
    });
    await assert.rejects(hb.post("/orders", { body: { productId: vpsId, billingCycle: "monthly" } }), (e) =>
      isHbError(e, "SERVICE_UNAVAILABLE"),
    );
    assert.equal(seen.filter((s) => s.method === "POST").length, 1);

    let posts = 0;
    const lost = scripted((r, n) => {
      if (r.method === "GET") return n === 0 ? orderList(1) : refused(503, "SERVICE_UNAVAILABLE");
      posts++;
      throw new TypeError("fetch failed");
    });
    await assert.rejects(
      lost.hb.post("/orders", { body: { productId: vpsId, billingCycle: "monthly" } }),
      (e) => isHbError(e, "NETWORK_ERROR") && e.status === 0,
    );
    assert.equal(posts, 1);
  });
});

describe("errors", () => {
  it("are HbError values keyed by code, with the extras of their code", async () => {
    const { hb } = scripted(() =>
      refused(403, "SCOPE_REQUIRED", { scope: "billing" }, { "x-request-id": "req-1" }),
    );
    const err = await hb
      .post("/invoices/{id}/pay", { params: { path: { id: vpsId } }, body: {} })
      .catch((e) => e);
    assert.ok(err instanceof HbError);
    assert.ok(err.is("SCOPE_REQUIRED"));
    assert.equal(err.scope, "billing");
    assert.equal(err.status, 403);
    assert.equal(err.requestId, "req-1");
    assert.equal(err.message, "refused: SCOPE_REQUIRED");
  });

  it("keep a code for an answer without the envelope", async () => {
    const { hb } = scripted(() => new Response("<html>Bad gateway</html>", { status: 404 }));
    await assert.rejects(hb.get("/account"), (e) => isHbError(e, "NOT_FOUND"));
  });
});

describe("pagination", () => {
  it("walks every page of a list whose pagination sits beside data (VPS)", async () => {
    const { hb, seen } = scripted((r) => {
      const page = Number(new URL(`${BASE}${r.path}`).searchParams.get("page"));
      return ok([{ id: `v${page}a` }, { id: `v${page}b` }], {
        pagination: { page, limit: 2, total: 5, pages: 3 },
      });
    });
    const ids: string[] = [];
    for await (const v of hb.paginate("/vps", { limit: 2 })) ids.push(v.id);
    assert.deepEqual(ids, ["v1a", "v1b", "v2a", "v2b", "v3a", "v3b"]);
    assert.deepEqual(
      seen.map((s) => s.path),
      ["/vps?limit=2&page=1", "/vps?limit=2&page=2", "/vps?limit=2&page=3"],
    );
  });

  it("walks a list whose pagination sits inside data, 200 a page unless told, keeping the filters", async () => {
    const { hb, seen } = scripted((r) => {
      const page = Number(new URL(`${BASE}${r.path}`).searchParams.get("page"));
      return ok({
        invoices: page === 1 ? [{ id: "i1" }] : [{ id: "i2" }],
        pagination: { page, limit: 200, total: 2, pages: 2 },
      });
    });
    const ids: string[] = [];
    for await (const i of hb.paginate("/invoices", { status: "unpaid" })) ids.push(i.id);
    assert.deepEqual(ids, ["i1", "i2"]);
    assert.deepEqual(
      seen.map((s) => s.path),
      ["/invoices?limit=200&status=unpaid&page=1", "/invoices?limit=200&status=unpaid&page=2"],
    );
  });
});

describe("waitForJob", () => {
  const job = (status: string, progress: number) => ({
    id: vpsId,
    action: "reboot",
    resource: { type: "service", id: vpsId },
    status,
    progress,
    started_at: "2026-11-23T10:00:00.000Z",
    finished_at: status === "running" ? null : "2026-11-23T10:00:01.000Z",
    error: status === "failed" ? { code: "PROVIDER_ERROR", message: "no" } : null,
  });

  it("reads the job until it finishes and reports each change of progress", async () => {
    const states = [job("running", 10), job("running", 10), job("running", 60), job("failed", 100)];
    const { hb } = scripted((_r, n) => ok(states[n]));
    const seen: number[] = [];
    const done = await hb.waitForJob(vpsId, { intervalMs: 1, onProgress: (j) => seen.push(j.progress) });
    assert.equal(done.status, "failed");
    assert.equal(done.error?.code, "PROVIDER_ERROR");
    assert.deepEqual(seen, [10, 60, 100]);
  });

  it("gives up with TIMEOUT when the job is still running at the deadline", async () => {
    const { hb } = scripted(() => ok(job("running", 5)));
    await assert.rejects(hb.waitForJob(vpsId, { intervalMs: 20, timeoutMs: 50 }), (e) =>
      isHbError(e, "TIMEOUT"),
    );
  });
});

describe("retry delays", () => {
  it("back off exponentially with jitter under the cap, and read Retry-After in seconds or as a date", () => {
    const policy = { retries: 5, baseDelayMs: 100, maxDelayMs: 1000 };
    assert.equal(
      retryDelayMs(policy, 0, undefined, () => 0),
      50,
    );
    assert.equal(
      retryDelayMs(policy, 2, undefined, () => 1),
      400,
    );
    assert.equal(
      retryDelayMs(policy, 8, undefined, () => 1),
      1000,
    );
    const limited = (after?: string) =>
      new Response(null, { status: 429, headers: after === undefined ? {} : { "retry-after": after } });
    assert.equal(retryDelayMs(policy, 0, limited("1")), 1000);
    assert.equal(retryDelayMs(policy, 0, limited("2")), undefined);
    assert.equal(retryDelayMs(policy, 0, limited()), undefined);
    const now = Date.parse("2026-11-23T10:00:00Z");
    assert.equal(retryAfterSeconds("Mon, 23 Nov 2026 10:00:30 GMT", now), 30);
    assert.equal(retryAfterSeconds("soon", now), undefined);
  });
});
