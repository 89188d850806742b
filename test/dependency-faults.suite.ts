import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { PortalService, Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { eventually } from "./helpers.ts";
import { type OwnStack, ownStack } from "./own-stack.ts";
import { csrfIn, PASSWORD, signInVisitor, visitor } from "./portal-pages.ts";
import { stackClient } from "./support/clients.ts";
import { type PrivateServer, privatePostgres, privateRedis } from "./support/private-servers.ts";

// The stack here runs on its own Redis and PostgreSQL servers, so killing them touches nothing
// that other test files use.
describe("when a dependency goes away", () => {
  let redis: PrivateServer;
  let pg: PrivateServer;
  let s: OwnStack;
  let key = "";

  before(async () => {
    [redis, pg] = await Promise.all([privateRedis(), privatePostgres()]);
    // Its own PostgreSQL server, so the production pool size (8): with the suite's 2, a query queued
    // behind connections stuck reconnecting reached the gateway's 5 s deadline before failing.
    s = await ownStack("deps", { REDIS_URL: redis.url, DB_POOL_MAX: "8" }, pg.url);
    const { customer, owner } = await s.auth.createCustomer({
      name: "Deps",
      email: "deps@example.test",
      currency: "EUR",
    });
    key = (
      await s.auth.createKey({
        personId: owner!.id,
        label: "k",
        scopes: [],
        ipAllowlist: "",
      })
    ).secretKey;
    assert.ok(customer);
    const portal = stackClient(s.stack.env, [PortalService], "AUTH_ADDR");
    const { token } = await portal.client.createPasswordLink({ realm: Realm.PORTAL, subjectId: owner!.id });
    await portal.client.setPassword({ token, password: PASSWORD });
    portal.close();
  });
  after(async () => {
    await s?.close();
    await Promise.all([redis?.close(), pg?.close()]);
  });

  /*
   * The first call of a Redis outage keeps the API's 5 s bound, the later ones 1 s. The gateway
   * learns that Redis is gone from the connection's close event; a call whose command was written
   * before that event ran (the kill is seen by the test first) is failed by ioredis after its
   * reconnection attempts (maxRetriesPerRequest), which took 1.4 s on a host at a load average of
   * 10. Every later call is refused at once, and a client that waited for reconnection again would
   * show there (up to 5 s).
   */
  const timed = async (path: string) => {
    const started = Date.now();
    const answer = await s.call("GET", path, key);
    return { ...answer, ms: Date.now() - started };
  };

  /**
   * Waits for the API root to answer 200 again; if it does not, the error says what it answered
   * last and what each service printed, since a stack that did not recover is a fault to find.
   */
  const recovered = async (what: string) => {
    let last = "no answer";
    try {
      await eventually(
        async () => {
          const r = await timed("/").catch((err: unknown) => {
            last = String(err);
            return undefined;
          });
          if (r) last = `${r.status} after ${r.ms} ms: ${r.text.slice(0, 300)}`;
          return r?.status === 200;
        },
        10_000,
        200,
      );
    } catch (err) {
      throw new Error(
        `${what}: the API root did not answer 200 within 10 s; last: ${last}\n${s.diagnosis()}`,
        {
          cause: err,
        },
      );
    }
  };

  // PostgreSQL first: a Redis that comes back empty makes every gateway resync its key table from
  // auth (the lease record is gone), which reads PostgreSQL; killing PostgreSQL right after the Redis
  // case would race that resync.
  for (const [name, server] of [
    ["PostgreSQL", () => pg],
    ["Redis", () => redis],
  ] as const) {
    it(`answers keyed requests 503 SERVICE_UNAVAILABLE with a generic message and Retry-After while ${name} is down (Redis: within 1 s after its first call, PostgreSQL: 5 s), and recovers within 10 s of its return`, async () => {
      await recovered(`before ${name} goes away`);
      await server().kill();
      try {
        // Keys are checked from the gateway's key table (Redis for the hourly window), so without
        // PostgreSQL the API root, which needs no backend, still answers; everything else is 503.
        if (name === "PostgreSQL") assert.equal((await timed("/")).status, 200);
        // Redis: each path twice, since a client that waits for reconnection attempts waits longer
        // at each (ioredis backs off up to 2 s): the later calls of an outage are the slow ones.
        const paths =
          name === "PostgreSQL"
            ? ["/services", "/account/balance"]
            : ["/", "/services", "/account/balance", "/", "/services", "/account/balance"];
        let first = true;
        for (const path of paths) {
          const down = await timed(path);
          assert.equal(down.status, 503, `${path}: ${down.text}`);
          assert.equal(down.body.success, false);
          assert.equal(down.body.code, "SERVICE_UNAVAILABLE", down.text);
          assert.doesNotMatch(down.body.error, /redis|postgres|ECONNREFUSED|127\.0\.0\.1/i);
          assert.match(down.headers.get("retry-after") ?? "", /^[1-9][0-9]*$/, `${path}: Retry-After`);
          // Redis down is answered at once (it took up to 5 s); PostgreSQL keeps the API's bound,
          // and so does the outage's first call to Redis (see `timed`).
          const bound = name === "Redis" && !first ? 1_000 : 5_000;
          assert.ok(down.ms < bound, `${path} answered after ${down.ms} ms`);
          first = false;
        }
      } finally {
        await server().start();
      }
      // No service may exit over a dependency's outage: postgres.js 3.4.9 threw from a buffered
      // write on a closed connection and took billing down (patches/postgres+3.4.9.patch).
      assert.deepEqual(s.exited(), [], `services exited while ${name} was away:\n${s.diagnosis()}`);
      const returned = Date.now();
      await recovered(`after ${name} came back`);
      assert.ok(Date.now() - returned <= 10_000);
    });
  }

  it("answers the pages 503 as a page at once, with Retry-After, while Redis is down (sessions and sign-in need it)", async () => {
    const base = s.stack.gatewayUrl;
    // Signed in once the stack is back from the Redis case before: the API root answering is not
    // enough, since the gateway's session store reconnects on its own back-off (a sign-in 47 ms
    // after the API root answered was 503 in a run).
    const signedIn = await eventually(
      () => signInVisitor(base, "portal", "deps@example.test").catch(() => undefined),
      10_000,
      200,
    );
    const fresh = visitor(base);
    const form = await fresh.get("/portal/sign-in");
    await redis.kill();
    let first = true;
    try {
      for (const [what, answer] of [
        ["a signed-in page", () => signedIn.get("/portal/team")],
        ["another signed-in page", () => signedIn.get("/portal/services")],
        ["a signed-in page again", () => signedIn.get("/portal/team")],
        [
          "the sign-in form",
          () =>
            fresh.post("/portal/sign-in", {
              _csrf: csrfIn(form.text),
              email: "deps@example.test",
              password: PASSWORD,
            }),
        ],
      ] as const) {
        const started = Date.now();
        const r = await answer();
        const ms = Date.now() - started;
        assert.equal(r.status, 503, `${what}: ${r.status}`);
        assert.equal(r.headers.get("content-type"), "text/html; charset=utf-8");
        assert.match(r.text, /temporarily unavailable/);
        assert.doesNotMatch(r.text, /redis|ECONNREFUSED|127\.0\.0\.1/i);
        assert.match(r.headers.get("retry-after") ?? "", /^[1-9][0-9]*$/, `${what}: Retry-After`);
        // At once: the pages took up to 5 s while Redis was down (ioredis waited for reconnections).
        assert.ok(ms < (first ? 5_000 : 1_000), `${what} answered after ${ms} ms`);
        first = false;
      }
    } finally {
      await redis.start();
    }
    await eventually(async () => (await signedIn.get("/portal/team")).status === 303, 10_000, 200);
  });
});
