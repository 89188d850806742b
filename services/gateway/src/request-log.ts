import type { Principal } from "@hb/contracts/hb/auth/v1/auth_pb";
import {
  type JetStreamClient,
  jetstream,
  type Logger,
  type NatsLink,
  type RequestLogRecord,
  streams,
} from "@hb/platform";
import type { Request, Response } from "express";
import { sourceIpOf } from "./request-auth.ts";
import { API_PREFIX } from "./route.ts";

export interface RequestLogPublisher {
  publish(record: RequestLogRecord): void;
  /** Publishes what is buffered (shutdown). */
  flush(): Promise<void>;
  /** Entries waiting to be published (kept while NATS is unreachable). */
  pending(): number;
  /** Entries given up because the buffer was full; reported in the log as they go. */
  dropped(): number;
}

export interface RequestLogOptions {
  /** Longest an entry waits to be batched with others. */
  intervalMs?: number;
  /** Entries per published message. */
  maxBatch?: number;
  /** Entries kept while publishing fails; beyond it the oldest are dropped. */
  maxPending?: number;
  /** First wait after a failed publish; doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
}

/** What the publisher needs from JetStream: one message out, confirmed or thrown. */
export type PublishBatch = (payload: Uint8Array) => Promise<unknown>;

export function jetStreamBatchPublisher(nats: NatsLink, ns: string): PublishBatch {
  let js: JetStreamClient | undefined;
  const subject = streams(ns).requestLogSubject("gateway");
  return async (payload) => {
    const nc = nats.current;
    // Thrown like any failed publish: the entries stay in the buffer until NATS is first reached.
    if (!nc) throw new Error("NATS not reached yet");
    js ??= jetstream(nc);
    return js.publish(subject, payload);
  };
}

/**
 * Publishes request-log entries to JetStream after the response is sent, never on the response
 * path. Entries are gathered for up to `intervalMs` (or `maxBatch` entries) and published as one
 * message, so a busy gateway pays one JetStream round trip per batch instead of per request.
 *
 * While NATS is unreachable, entries wait in a bounded buffer and are retried with back-off, in
 * order, so an outage of NATS loses no entry unless it outlasts `maxPending` entries (then the
 * oldest go first, counted and logged): the gateway keeps serving and its memory stays bounded.
 */
export function createRequestLogPublisher(
  publishBatch: PublishBatch,
  log: Logger,
  opts: RequestLogOptions = {},
): RequestLogPublisher {
  const intervalMs = opts.intervalMs ?? 100;
  const maxBatch = opts.maxBatch ?? 500;
  const maxPending = opts.maxPending ?? 100_000;
  const retryMs = opts.retryMs ?? 500;
  const maxRetryMs = opts.maxRetryMs ?? 10_000;
  const encoder = new TextEncoder();
  const buffer: RequestLogRecord[] = [];
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let failures = 0;
  let droppedCount = 0;

  const schedule = (ms: number) => {
    timer ??= setTimeout(() => {
      timer = undefined;
      void drain();
    }, ms);
    timer.unref?.();
  };

  // One publisher at a time, so entries leave in the order they came.
  const publishPending = async (): Promise<void> => {
    while (buffer.length > 0) {
      const batch = buffer.slice(0, maxBatch);
      try {
        await publishBatch(encoder.encode(JSON.stringify(batch)));
      } catch (err) {
        failures++;
        const wait = Math.min(maxRetryMs, retryMs * 2 ** (failures - 1));
        if (failures === 1 || failures % 20 === 0)
          log.warn("request log publish failed; keeping entries and retrying", {
            err,
            pending: buffer.length,
            retryInMs: wait,
          });
        schedule(wait);
        return;
      }
      failures = 0;
      buffer.splice(0, batch.length);
    }
  };
  const drain = (): Promise<void> => {
    if (inFlight) return inFlight;
    // Assigned before anything runs, and cleared only by the run it names: a run that finds
    // nothing to do must not leave a settled promise behind that blocks every later drain.
    const run = Promise.resolve()
      .then(publishPending)
      .finally(() => {
        if (inFlight === run) inFlight = undefined;
      });
    inFlight = run;
    return run;
  };

  return {
    publish(record) {
      buffer.push(record);
      if (buffer.length > maxPending) {
        const excess = buffer.length - maxPending;
        buffer.splice(0, excess);
        droppedCount += excess;
        log.warn("request log buffer full; dropped the oldest entries", {
          dropped: excess,
          total: droppedCount,
        });
      }
      if (failures > 0) return; // a retry is already scheduled
      if (buffer.length >= maxBatch) void drain();
      else schedule(intervalMs);
    },
    async flush() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await inFlight;
      await drain();
    },
    pending: () => buffer.length,
    dropped: () => droppedCount,
  };
}

/** Publishes the request's log entry once the answer is sent, if a key was identified. */
export function trackRequest(
  requestLog: RequestLogPublisher,
  req: Request,
  res: Response,
): { principal?: Principal } {
  const started = performance.now();
  const track: { principal?: Principal } = {};
  res.on("finish", () => {
    const principal = track.principal;
    if (principal?.keyId) {
      requestLog.publish({
        keyId: principal.keyId,
        customerId: principal.customerId,
        method: req.method,
        endpoint: API_PREFIX + req.path,
        status: res.statusCode,
        ip: sourceIpOf(req),
        at: new Date().toISOString(),
        durationMs: performance.now() - started,
      });
    }
  });
  return track;
}
