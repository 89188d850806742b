import type { RequestListener, Server } from "node:http";
import { http } from "@hb/platform/node-http";
import { enforceRequestDeadlines, type RequestDeadlines } from "./request-deadlines.ts";

export interface ServerLimits extends RequestDeadlines {
  /** How long an idle keep-alive connection is kept open. */
  keepAliveTimeoutMs: number;
  /** Open connections at once; beyond it new connections are closed at once. */
  maxConnections: number;
}

/**
 * The gateway's HTTP server with its limits, so a slow or greedy client cannot hold sockets and
 * memory: headers and the whole request must arrive within their deadlines (else 408 and the
 * connection closed), and connections beyond the cap are refused. Long answers (the webhook event
 * stream) are not cut: the deadlines cover receiving the request only.
 */
export function createGatewayServer(app: RequestListener, limits: ServerLimits): Server {
  const server = http.createServer(
    {
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Off: Node judges them before reading what arrived, refusing requests that came in time to
      // a process starved of CPU; the gateway's own deadlines replace them.
      headersTimeout: 0,
      requestTimeout: 0,
    },
    app,
  );
  enforceRequestDeadlines(server, limits);
  server.maxConnections = limits.maxConnections;
  return server;
}
