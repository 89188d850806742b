/**
 * Prometheus metrics with prom-client. One registry per process, served at /metrics on a port of
 * its own (never the API port, so it is not exposed with the API). Labels are bounded sets (an
 * RPC method, a route template, a status code), never raw paths or ids.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Logger } from "./log.ts";
import { http } from "./node-http.ts";

export { Counter, Gauge, Histogram };

export const metricsRegistry = new Registry();

/** Seconds; from a cache hit (1 ms) to a slow database call (5 s). */
export const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const rpcServerHandled = new Counter({
  name: "rpc_server_handled_total",
  help: "RPCs completed by this service, by method and gRPC status code",
  labelNames: ["method", "code"] as const,
  registers: [metricsRegistry],
});

const rpcServerSeconds = new Histogram({
  name: "rpc_server_handling_seconds",
  help: "Time to handle an RPC, by method and gRPC status code",
  labelNames: ["method", "code"] as const,
  buckets: latencyBuckets,
  registers: [metricsRegistry],
});

const codeNames = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

// The label children are made once per method and code, not on every call.
const rpcChildren = new Map<string, { count: Counter.Internal; seconds: Histogram.Internal<string> }>();

/** Records one finished RPC. `code` is the gRPC status code number. */
export function observeRpc(method: string, code: number, seconds: number): void {
  const key = `${method} ${code}`;
  let child = rpcChildren.get(key);
  if (!child) {
    const labels = { method, code: codeNames[code] ?? String(code) };
    child = { count: rpcServerHandled.labels(labels), seconds: rpcServerSeconds.labels(labels) };
    rpcChildren.set(key, child);
  }
  child.count.inc();
  child.seconds.observe(seconds);
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** The event-loop delay histogram's sampling period (ms). */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * Serves /metrics. A port that cannot be bound is logged and the service runs on without it:
 * losing metrics must not take the service down.
 */
export async function startMetricsServer(
  service: string,
  port: number,
  host: string,
  log: Logger,
): Promise<MetricsServer | undefined> {
  metricsRegistry.setDefaultLabels({ service });
  // The event-loop delay histogram samples on a timer of this period. prom-client's 10 ms woke an
  // idle service 100 times a second, which was 5.5-6.5 of its 8-19 ms of CPU a second at rest
  // (scripts/bench/idle-cpu.ts on this VM, where each wake-up is a costly syscall); every 100 ms the
  // histogram still sees any stall of the loop, as a timer firing that much late.
  collectDefaultMetrics({ register: metricsRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" || (req.url !== "/metrics" && !req.url?.startsWith("/metrics?"))) {
      res.writeHead(404).end();
      return;
    }
    metricsRegistry.metrics().then(
      (text) => res.writeHead(200, { "content-type": metricsRegistry.contentType }).end(text),
      (err: unknown) => {
        log.warn("metrics collection failed", { err });
        res.writeHead(500).end();
      },
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, resolve);
    });
  } catch (err) {
    log.warn("metrics port unavailable; running without /metrics", { port, err });
    return undefined;
  }
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
