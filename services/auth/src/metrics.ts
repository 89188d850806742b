import { Histogram, latencyBuckets, metricsRegistry } from "@hb/platform";

const verifySeconds = new Histogram({
  name: "auth_key_verification_seconds",
  help: "Time to verify an API key (database, hash, rate window), by outcome (accepted, refused)",
  labelNames: ["outcome"] as const,
  buckets: latencyBuckets,
  registers: [metricsRegistry],
});

const accepted = verifySeconds.labels({ outcome: "accepted" });
const refused = verifySeconds.labels({ outcome: "refused" });

/** Times each verification; the outcome is whether the answer carries a refusal. */
export function timedVerify<A extends unknown[], R extends { refusal?: unknown }>(
  verify: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    const started = performance.now();
    const result = await verify(...args);
    (result.refusal ? refused : accepted).observe((performance.now() - started) / 1000);
    return result;
  };
}
