/**
 * The web console (issue 29 §4) at its edges, on the simulator: the API's ticket and the
 * console's WebSocket, the portal's Console page and its session, and what closes a console. The
 * real LXD console is in services/compute/src/lxd/driver.test.ts; the page in a browser in
 * test/portal-browser.test.ts.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { ServiceAction } from "@hb/contracts/hb/billing/v1/services_pb";
import { connectRedis } from "@hb/platform/redis";
import WebSocket from "ws";
import { newToken } from "../services/gateway/src/pages/customer/once.ts";
import {
  type Account,
  api,
  auth,
  billing,
  eventually,
  GATEWAY,
  newAccount,
  newMachine,
  newMember,
} from "./helpers.ts";
import { csrfIn, portalMember, portalOwner, signInVisitor } from "./portal-pages.ts";
import { serviceSql } from "./support/service-db.ts";

const db = serviceSql("compute");
/** Every socket a test opened, ended when the file ends (one a failed test left open included). */
const sockets = new Set<WebSocket>();
const redis = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
after(async () => {
  for (const ws of sockets) ws.terminate();
  await db.end({ timeout: 5 });
  redis.disconnect();
});

/** An open console: what it has written so far, and how it closed. */
interface Session {
  ws: WebSocket;
  text: () => string;
  closed: Promise<{ code: number; reason: string }>;
  type: (s: string) => void;
}

/** Opens a console's WebSocket: the open session, or the HTTP refusal (status and envelope). */
function connect(
  url: string,
  headers: Record<string, string> = {},
): Promise<Session | { status: number; body: { code: string; error: string } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    sockets.add(ws);
    let out = "";
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      ws.on("close", (code, reason) => r({ code, reason: reason.toString() })),
    );
    ws.on("message", (data: Buffer) => {
      out += data.toString("utf8");
    });
    ws.once("open", () =>
      resolve({ ws, text: () => out, closed, type: (s) => ws.send(Buffer.from(s), { binary: true }) }),
    );
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
    ws.once("error", (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

const opened = (s: Awaited<ReturnType<typeof connect>>): Session => {
  assert.ok("ws" in s, `the console opened (${JSON.stringify("body" in s ? s : "")})`);
  return s;
};
const refused = (s: Awaited<ReturnType<typeof connect>>) => {
  assert.ok("status" in s, "the console was refused");
  return s;
};
/** How the console closed, within a deadline (a console left open fails the test, not hangs it). */
const closing = (s: Session, ms = 10_000) =>
  Promise.race([
    s.closed,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`the console was still open after ${ms} ms`)), ms).unref(),
    ),
  ]);
const shows = (s: Session, pattern: RegExp) => eventually(async () => pattern.test(s.text()), 10_000);

const ticketFor = (acct: { key: string }, id: string) =>
  api("POST", `/api/v1/vps/${id}/console`, { key: acct.key });

const auditOf = (id: string) =>
  db<
    { via: string; person_id: string; key_id: string; closed_at: Date | null; close_reason: string | null }[]
  >`
    select via, person_id, key_id, closed_at, close_reason from compute.console_sessions
    where service_id = ${id} order by opened_at`;

describe("the console over the API", () => {
  let acct: Account;
  let vps: string;
  before(async () => {
    acct = await newAccount();
    vps = await newMachine(acct, { kind: "vps" });
  });

  it("a ticket opens the simulator's console once: its banner, typed lines echoed, the opening recorded", async () => {
    const r = await ticketFor(acct, vps);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const { ticket, url, expires_in_seconds } = r.body.data;
    assert.match(ticket, /^hbct_/);
    assert.equal(url, `${GATEWAY.replace(/^http/, "ws")}/api/v1/console/ws?ticket=${ticket}`);
    assert.equal(expires_in_seconds, 60);
    const s = opened(await connect(`${url}&cols=100&rows=30`));
    await shows(s, /Simulated console: no machine runs behind this service/);
    s.type("hello console\r");
    await shows(s, /echo: hello console/);
    s.type("size\r");
    await shows(s, /100x30/);
    s.ws.send(JSON.stringify({ type: "resize", cols: 120, rows: 40 }));
    s.type("size\r");
    await shows(s, /120x40/);
    const [row] = await auditOf(vps);
    assert.deepEqual([row.via, row.person_id, row.key_id], ["api", acct.ownerId, acct.keyId]);
    s.type("exit\r");
    assert.deepEqual(await closing(s), { code: 1000, reason: "ended" });
    await eventually(async () => (await auditOf(vps))[0].close_reason === "ended", 10_000);

    const again = refused(await connect(url));
    assert.equal(again.status, 401);
    assert.equal(again.body.code, "UNAUTHORIZED");
    assert.match(again.body.error, /unknown, used or expired/);
  });

  it("an expired ticket is refused; a ticket lives no longer than its minute", async () => {
    const { ticket, url } = (await ticketFor(acct, vps)).body.data;
    const key = `${process.env.HB_NS}:console-ticket:${createHash("sha256").update(ticket).digest("base64url")}`;
    const ttl = await redis.pttl(key);
    assert.ok(ttl > 0 && ttl <= 60_000, `ticket's time to live ${ttl} ms`);
    await redis.pexpire(key, 1);
    await eventually(async () => (await redis.exists(key)) === 0, 5_000);
    assert.equal(refused(await connect(url)).status, 401);
    assert.equal(
      refused(await connect(`${GATEWAY.replace(/^http/, "ws")}/api/v1/console/ws?ticket=nonsense`)).status,
      401,
    );
  });

  it("refused without the manage permission, for another customer's VPS, a stopped machine and a suspended service", async () => {
    const power = await newMember(acct.customerId, ["view_services", "power_services"], ["services"]);
    const denied = await ticketFor(power, vps);
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    assert.equal(denied.body.code, "FORBIDDEN");
    assert.match(denied.body.error, /permissions do not allow/);

    const other = await newAccount();
    assert.equal((await ticketFor(other, vps)).status, 404);

    const stopped = await newMachine(acct, { kind: "vps", state: "stopped" });
    const r = await ticketFor(acct, stopped);
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.match(r.body.error, /stopped; its console opens while it is running/);

    const held = await newMachine(acct, { kind: "vps" });
    await billing.adminSetServiceState({
      serviceId: held,
      action: ServiceAction.SUSPEND,
      reason: "console test",
    });
    const suspended = await eventually(async () => {
      const x = await ticketFor(acct, held);
      return x.status === 403 ? x : undefined;
    }, 15_000);
    assert.match(suspended.body.error, /suspended/);
  });

  it("an open console closes when its service is suspended, and the record says why", async () => {
    const id = await newMachine(acct, { kind: "vps" });
    const s = opened(await connect((await ticketFor(acct, id)).body.data.url));
    await shows(s, /Simulated console/);
    await billing.adminSetServiceState({
      serviceId: id,
      action: ServiceAction.SUSPEND,
      reason: "console test",
    });
    assert.deepEqual(await closing(s), { code: 1000, reason: "suspended" });
    await eventually(async () => (await auditOf(id))[0]?.close_reason === "suspended", 10_000);
  });

  it("an open console closes when the key that asked for its ticket is revoked, and the record says why", async () => {
    // An account of its own: its only key is revoked.
    const own = await newAccount();
    const id = await newMachine(own, { kind: "vps" });
    const s = opened(await connect((await ticketFor(own, id)).body.data.url));
    await shows(s, /Simulated console/);
    await auth.revokeKey({ personId: own.ownerId, keyId: own.keyId });
    assert.deepEqual(await closing(s), { code: 1000, reason: "key-revoked" });
    await eventually(async () => (await auditOf(id))[0]?.close_reason === "key-revoked", 10_000);
  });
});

describe("the console in the portal", () => {
  let owner: Awaited<ReturnType<typeof portalOwner>>;
  let vps: string;
  before(async () => {
    owner = await portalOwner();
    const acct = { customerId: owner.customerId, ownerId: owner.ownerId, key: "", keyId: "" };
    vps = await newMachine(acct, { kind: "vps" });
  });

  /** Signs in, opens the Console page's form, and answers the visitor and the terminal's socket URL. */
  async function consolePage(email: string) {
    const v = await signInVisitor(GATEWAY, "portal", email);
    const shown = await v.get(`/portal/services/${vps}/console`);
    assert.equal(shown.status, 200);
    const once = /action="[^"]*\/console"[^>]*>.*?name="_once" value="([^"]+)"/s.exec(shown.text)?.[1];
    assert.ok(once, "the page offers the Open the console form");
    const posted = await v.post(`/portal/services/${vps}/console`, {
      _csrf: csrfIn(shown.text),
      _once: once,
    });
    assert.equal(posted.status, 303, posted.text);
    const terminal = await v.get(posted.location);
    const socket = /data-socket="([^"]+)"/.exec(terminal.text)?.[1]?.replaceAll("&amp;", "&");
    assert.ok(socket, "the page carries the terminal's socket");
    assert.match(terminal.headers.get("content-security-policy") ?? "", /script-src 'self';/);
    const cookie = [...v.jar].map(([k, val]) => `${k}=${val}`).join("; ");
    return { v, url: `${GATEWAY.replace(/^http/, "ws")}${socket}`, cookie, page: terminal.text };
  }

  it("the page's console opens with the person's session from the portal's origin, and closes on sign-out", async () => {
    const p = await consolePage(owner.email);
    assert.match(p.page, /src="\/assets\/xterm\.js"/);
    const s = opened(await connect(p.url, { cookie: p.cookie, origin: GATEWAY }));
    await shows(s, /Simulated console/);
    const [row] = await auditOf(vps);
    assert.deepEqual([row.via, row.person_id, row.key_id], ["portal", owner.ownerId, ""]);
    await p.v.post("/portal/sign-out", {});
    assert.deepEqual(await closing(s), { code: 1000, reason: "session-ended" });
    await eventually(async () => (await auditOf(vps))[0]?.close_reason === "session-ended", 10_000);
  });

  it("a portal ticket is refused from another origin and without the session", async () => {
    const a = await consolePage(owner.email);
    const foreign = refused(await connect(a.url, { cookie: a.cookie, origin: "https://evil.example" }));
    assert.deepEqual([foreign.status, foreign.body.code], [403, "FORBIDDEN"]);
    const b = await consolePage(owner.email);
    const bare = refused(await connect(b.url, { origin: GATEWAY }));
    assert.deepEqual([bare.status, bare.body.code], [401, "UNAUTHORIZED"]);
  });

  it("a view-only member is shown no Console tab or form, and the form refuses them", async () => {
    const member = await portalMember(owner.customerId, ["view_services"]);
    const v = await signInVisitor(GATEWAY, "portal", member.email);
    const overview = await v.get(`/portal/services/${vps}`);
    assert.doesNotMatch(overview.text, /\/console"/);
    const shown = await v.get(`/portal/services/${vps}/console`);
    assert.match(shown.text, /id="not-permitted"/);
    assert.doesNotMatch(shown.text, /<form method="post" action="[^"]*\/console"/);
    const r = await v.post(`/portal/services/${vps}/console`, {
      _csrf: csrfIn(shown.text),
      _once: newToken(),
    });
    const after = r.status === 303 ? await v.get(r.location) : r;
    assert.doesNotMatch(after.text, /data-socket=/);
  });
});
