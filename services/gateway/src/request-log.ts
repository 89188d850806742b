import { jetstream, type Logger, type NatsConnection, type RequestLogRecord, streams } from "@hb/platform";

export interface RequestLogPublisher {
  publish(record: RequestLogRecord): void;
  /** Publishes what is buffered (shutdown). */
  flush(): Promise<void>;
}

/**
 * Publishes request-log entries to JetStream after the response is sent, never on the response
 * path. Entries are gathered for up to `intervalMs` (or `maxBatch` entries) and published as one
 * message, so a busy gateway pays one JetStream round trip per batch instead of per request.
 */
export function createRequestLogPublisher(
  nc: NatsConnection,
  ns: string,
  log: Logger,
  intervalMs = 100,
  maxBatch = 500,
): RequestLogPublisher {
  const js = jetstream(nc);
  const subject = streams(ns).requestLogSubject("gateway");
  const encoder = new TextEncoder();
  let buffer: RequestLogRecord[] = [];
  let timer: NodeJS.Timeout | undefined;

  const flush = async () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0) return;
    const batch = buffer;
    buffer = [];
    try {
      await js.publish(subject, encoder.encode(JSON.stringify(batch)));
    } catch (err) {
      log.warn("request log publish failed", { err, entries: batch.length });
    }
  };

  return {
    publish(record) {
      buffer.push(record);
      if (buffer.length >= maxBatch) void flush();
      else timer ??= setTimeout(() => void flush(), intervalMs);
    },
    flush,
  };
}
