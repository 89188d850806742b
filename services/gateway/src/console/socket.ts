import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import type { OpenConsoleResponse } from "@hb/contracts/hb/compute/v1/console_pb";
import { type ErrorCode, errorCodes, holdsAny, type Logger, resolveError } from "@hb/platform";
import { http } from "@hb/platform/node-http";
import { type WebSocket, WebSocketServer } from "ws";
import type { Clients } from "../clients.ts";
import type { KeySync } from "../key-sync.ts";
import { PORTAL, parseCookies } from "../pages/session.ts";
import { API_PREFIX } from "../route.ts";
import { type KeyCloseReason, keyCloseReason } from "./key-hold.ts";
import type { ConsoleGrant, ConsoleTickets } from "./tickets.ts";

/** Where a console's WebSocket is opened (the gateway's server answers its upgrade). */
export const CONSOLE_SOCKET_PATH = `${API_PREFIX}/console/ws`;
/**
 * The same, for the portal's page: its session cookie is scoped to /portal, so the browser sends it
 * only to a path under it.
 */
export const PORTAL_CONSOLE_SOCKET_PATH = "/portal/console/ws";
const SOCKET_PATHS = new Set([CONSOLE_SOCKET_PATH, PORTAL_CONSOLE_SOCKET_PATH]);

/** Who may keep a console open: the permission the ticket's route asks (routes/console.ts). */
const CONSOLE_PERMISSIONS = ["manage_services"];
/** The most a browser may send in one frame: a paste, not a file. */
const MAX_FRAME = 64 * 1024;

export interface ConsoleSocketDeps {
  clients: Pick<Clients, "console" | "portalPages">;
  tickets: ConsoleTickets;
  publicUrl: string;
  log: Logger;
  /**
   * How often a portal console checks its person's session (sign-out, expiry, permission lost),
   * and an API console its key (revoked, expired).
   */
  sessionCheckMs: number;
  /** The gateway's key table, where it keeps one (KEY_TABLE): what an API console's key check reads. */
  keys?: Pick<KeySync, "table" | "serving">;
}

type Stream = AsyncIterator<OpenConsoleResponse>;

/** A refusal before the upgrade: the API's envelope and status, then the connection is closed. */
function refuse(socket: Duplex, code: ErrorCode, message: string): void {
  const status = errorCodes[code].http;
  const body = JSON.stringify({ success: false, error: message, code });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

const callerOf = (g: ConsoleGrant) => ({
  customerId: g.customerId,
  personId: g.personId,
  keyId: g.keyId,
  permissions: g.permissions,
  isOwner: g.isOwner,
  currency: g.currency,
});

/** A terminal size from the query (?cols=&rows=), within what compute takes; 0: its default. */
function sizeOf(url: URL): { cols: number; rows: number } {
  const n = (name: string) => {
    const v = Number(url.searchParams.get(name));
    return Number.isInteger(v) && v >= 1 && v <= 1000 ? v : 0;
  };
  return { cols: n("cols"), rows: n("rows") };
}

/**
 * The console's WebSocket (docs/architecture.md, "Web console"): the ticket is redeemed (once),
 * a portal ticket also needs its person's live session and the gateway's own Origin, compute
 * opens the console, and only then is the connection upgraded, so every refusal is an ordinary
 * HTTP answer with the API's envelope. Once open, bytes are relayed both ways; compute's stream
 * says when and why it closes; a portal console also closes when its session ends.
 */
export function consoleSockets(deps: ConsoleSocketDeps) {
  const { clients, tickets, log } = deps;
  const origin = new URL(deps.publicUrl).origin;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME });
  const open = new Set<WebSocket>();

  /** Why a portal console may not (or no longer) be open for the session; undefined when it may. */
  async function sessionRefusal(
    token: string | undefined,
    g: ConsoleGrant,
  ): Promise<"session-ended" | "not-permitted" | undefined> {
    if (!token) return "session-ended";
    let session: Awaited<ReturnType<typeof clients.portalPages.portal.getSession>>["session"];
    try {
      session = (await clients.portalPages.portal.getSession({ realm: PORTAL.realm, sessionToken: token }))
        .session;
    } catch (err) {
      if (resolveError(err).code === "UNAUTHORIZED") return "session-ended";
      throw err;
    }
    if (!session || session.subjectId !== g.personId || session.customerId !== g.customerId)
      return "session-ended";
    if (
      !holdsAny(session.permissions, CONSOLE_PERMISSIONS) ||
      session.customerStatus === CustomerStatus.SUSPENDED
    )
      return "not-permitted";
    return undefined;
  }

  function relay(
    ws: WebSocket,
    g: ConsoleGrant,
    consoleId: string,
    stream: Stream,
    gone: AbortController,
    token?: string,
  ) {
    open.add(ws);
    const caller = callerOf(g);
    const finish = (code: number, reason: string) => {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
    };
    // Writes go one at a time, in the order typed.
    let writes = Promise.resolve();
    /**
     * Closes it for a reason only the gateway learns: compute records the reason and ends the
     * stream with it; the socket is closed with it even if compute cannot be told.
     */
    let closing = false;
    const closeFor = (why: KeyCloseReason | "session-ended" | "not-permitted") => {
      if (closing) return;
      closing = true;
      writes = writes
        .then(async () => {
          await clients.console.writeConsole({ caller, consoleId, close: why });
        })
        .catch((err: unknown) => log.debug("console close not recorded", { consoleId, err }))
        .finally(() => finish(1000, why));
    };
    const send = (part: { input?: Uint8Array; cols?: number; rows?: number }) => {
      writes = writes
        .then(() => clients.console.writeConsole({ caller, consoleId, ...part }))
        .then(
          () => undefined,
          (err: unknown) => {
            log.debug("console write refused", { consoleId, err });
            finish(1011, "unavailable");
          },
        );
    };
    ws.on("message", (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) return send({ input: bytes });
      // Text frames are control messages; the only one is a new window size.
      try {
        const m = JSON.parse(bytes.toString("utf8")) as { type?: string; cols?: unknown; rows?: unknown };
        const ok = (v: unknown): v is number =>
          Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 1000;
        if (m.type === "resize" && ok(m.cols) && ok(m.rows)) send({ cols: m.cols, rows: m.rows });
      } catch {
        // Not a control message: ignored, as a terminal ignores what it does not understand.
      }
    });
    // A portal console holds while its session does; an API console while its key does.
    const check = setInterval(() => {
      if (token === undefined) {
        const why = keyCloseReason(deps.keys, g, Date.now());
        if (why) closeFor(why);
        return;
      }
      sessionRefusal(token, g).then(
        (why) => why && closeFor(why),
        (err: unknown) => log.warn("console session check failed; kept open", { err }),
      );
    }, deps.sessionCheckMs);
    ws.on("close", () => {
      open.delete(ws);
      clearInterval(check);
      gone.abort();
    });
    (async () => {
      try {
        for (let n = await stream.next(); !n.done; n = await stream.next()) {
          const item = n.value.item;
          if (item.case === "output") ws.send(item.value, { binary: true });
          else if (item.case === "closed") return finish(1000, item.value.reason || "ended");
        }
        finish(1000, "ended");
      } catch (err) {
        if (gone.signal.aborted) return;
        log.warn("console stream failed", { consoleId, err });
        finish(1011, "unavailable");
      }
    })();
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? "/", origin);
    const grant = await tickets.redeem(url.searchParams.get("ticket") ?? "");
    if (!grant)
      return refuse(
        socket,
        "UNAUTHORIZED",
        "The console ticket is unknown, used or expired; ask for a new one",
      );
    let token: string | undefined;
    if (grant.via === "portal") {
      // The session cookie rides along with any page's WebSocket: only the portal's own pages may
      // use it (cross-site WebSocket hijacking).
      if (req.headers.origin !== origin)
        return refuse(socket, "FORBIDDEN", "A portal console opens only from the portal's own pages");
      token = parseCookies(req.headers.cookie)[PORTAL.sessionCookie];
      const why = await sessionRefusal(token, grant);
      if (why === "session-ended")
        return refuse(socket, "UNAUTHORIZED", "Your session has ended; sign in again");
      if (why)
        return refuse(
          socket,
          "FORBIDDEN",
          "The console needs the manage permission on an account that is not suspended",
        );
    }
    const gone = new AbortController();
    const stream = clients.console
      .openConsole(
        { caller: callerOf(grant), serviceId: grant.serviceId, via: grant.via, ...sizeOf(url) },
        { signal: gone.signal, timeoutMs: 0 },
      )
      [Symbol.asyncIterator]();
    let first: IteratorResult<OpenConsoleResponse>;
    try {
      first = await stream.next();
    } catch (err) {
      gone.abort();
      const r = resolveError(err);
      return refuse(socket, r.code, r.message);
    }
    if (first.done || first.value.item.case !== "opened") {
      gone.abort();
      return refuse(socket, "SERVICE_UNAVAILABLE", "The console did not open; try again in a moment");
    }
    const consoleId = first.value.item.value.consoleId;
    if (socket.destroyed) {
      gone.abort();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => relay(ws, grant, consoleId, stream, gone, token));
  }

  return {
    /** Serves an upgrade request when it is a console's; answers false for any other path. */
    handle(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
      if (!SOCKET_PATHS.has(new URL(req.url ?? "/", origin).pathname)) return false;
      socket.on("error", () => undefined);
      upgrade(req, socket, head).catch((err: unknown) => {
        log.error("console upgrade failed", { err });
        if (!socket.destroyed)
          refuse(socket, "INTERNAL_ERROR", "Internal error. The failure was logged; please try again later.");
      });
      return true;
    },
    /** Closes every open console (shutdown). */
    close(): void {
      for (const ws of open) ws.close(1001, "shutdown");
    },
  };
}
