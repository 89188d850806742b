import { Counter, Histogram, latencyBuckets, metricsRegistry } from "@hb/platform";

const labelNames = ["method", "route", "status"] as const;

const httpRequests = new Counter({
  name: "http_requests_total",
  help: "Answers sent, by method, route template and HTTP status",
  labelNames,
  registers: [metricsRegistry],
});

const httpSeconds = new Histogram({
  name: "http_request_duration_seconds",
  help: "Time from request to the answer's last byte, by method, route template and HTTP status",
  labelNames,
  buckets: latencyBuckets,
  registers: [metricsRegistry],
});

/** RATE_LIMITED (the key's hourly limit) and ACTION_RATE_LIMITED (a cool-down). */
export const rateRefusals = new Counter({
  name: "gateway_rate_limit_refusals_total",
  help: "Requests refused by the hourly rate limit (RATE_LIMITED) or a cool-down (ACTION_RATE_LIMITED)",
  labelNames: ["code"] as const,
  registers: [metricsRegistry],
});

/**
 * Key checks by where they were decided: `table` (the gateway's key table) or `auth` (auth.Verify:
 * a key this replica has not seen yet, a signed reseller route, or KEY_TABLE=false).
 */
export const keyChecks = new Counter({
  name: "gateway_key_checks_total",
  help: "Key checks by source (table: the gateway's key table; auth: auth.Verify) and outcome (accepted, refused)",
  labelNames: ["source", "outcome"] as const,
  registers: [metricsRegistry],
});

/** Route label of a request no route matched: raw paths would make a label per URL. */
export const UNMATCHED_ROUTE = "unmatched";

const children = new Map<string, { count: Counter.Internal; seconds: Histogram.Internal<string> }>();

/** Records one answer; the label children are looked up once per method, route and status. */
export function observeHttp(method: string, route: string, status: number, seconds: number): void {
  const key = `${method} ${route} ${status}`;
  let child = children.get(key);
  if (!child) {
    const labels = { method, route, status: String(status) };
    child = { count: httpRequests.labels(labels), seconds: httpSeconds.labels(labels) };
    children.set(key, child);
  }
  child.count.inc();
  child.seconds.observe(seconds);
}

/**
 * Machine-list pages by how they were answered: `held` (compute said the page this gateway holds
 * still stands, held-pages.ts) or `read` (compute sent the page's records).
 */
export const machinePageReads = new Counter({
  name: "gateway_machine_page_reads_total",
  help: "VPS and dedicated list pages answered from the page this gateway held (held) or from the records compute sent (read)",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});
