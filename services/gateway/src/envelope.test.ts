import assert from "node:assert/strict";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import express from "express";
import { JsonText, sendOk } from "./envelope.ts";

describe("an answer whose data is already JSON text", () => {
  const data = [{ id: "a", name: 'quote " and é', n: 1, nested: { ok: true, none: null } }];
  const extra = { pagination: { page: 1, limit: 50, total: 1, pages: 1 } };
  let base = "";
  let close = () => {};
  before(async () => {
    const app = express();
    app.disable("x-powered-by");
    app.disable("etag");
    app.get("/objects", (_req, res) => sendOk(res, 200, data, extra));
    app.get("/text", (_req, res) => sendOk(res, 200, new JsonText(JSON.stringify(data)), extra));
    app.get("/objects-bare", (_req, res) => sendOk(res, 201, data));
    app.get("/text-bare", (_req, res) => sendOk(res, 201, new JsonText(JSON.stringify(data))));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  after(() => close());

  // node:http, not fetch: fetch adds Cache-Control: no-cache to a conditional request.
  const answer = (path: string, init: { method?: string; headers?: Record<string, string> } = {}) =>
    new Promise<{ status?: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = request(base + path, { method: init.method ?? "GET", headers: init.headers }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () => {
          const { date: _, ...headers } = res.headers;
          resolve({ status: res.statusCode, headers, body });
        });
      });
      req.on("error", reject);
      req.end();
    });

  it("a conditional GET Express answers 304 is answered 304", async () => {
    assert.equal((await answer("/text", { headers: { "if-none-match": "*" } })).status, 304);
  });

  for (const [what, init] of [
    ["GET", {}],
    ["HEAD", { method: "HEAD" }],
    ["a conditional GET", { headers: { "if-none-match": "*" } }],
  ] as const) {
    it(`is sent as the objects would be, for ${what}`, async () => {
      assert.deepEqual(await answer("/text", init), await answer("/objects", init));
      assert.deepEqual(await answer("/text-bare", init), await answer("/objects-bare", init));
    });
  }
});
