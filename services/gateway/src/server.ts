import http from "node:http";

export interface ServerLimits {
  /** Longest a client may take to send a request's headers. */
  headersTimeoutMs: number;
  /** Longest a client may take to send a whole request, body included (not the answer). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open. */
  keepAliveTimeoutMs: number;
  /** Open connections at once; beyond it new connections are closed at once. */
  maxConnections: number;
}

/**
 * The gateway's HTTP server with its limits, so a slow or greedy client cannot hold sockets and
 * memory: headers and the whole request must arrive within their deadlines (else Node answers
 * 408 and closes), and connections beyond the cap are refused. Long answers (the webhook event
 * stream) are not cut: the deadlines cover receiving the request only.
 */
export function createGatewayServer(app: http.RequestListener, limits: ServerLimits): http.Server {
  const server = http.createServer(
    {
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks both deadlines on this interval (30 s by default), which would let a short
      // deadline run far past its time.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  return server;
}
