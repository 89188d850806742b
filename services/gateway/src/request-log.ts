import { jetstream, type Logger, type NatsConnection, type RequestLogRecord, streams } from "@hb/platform";

export interface RequestLogPublisher {
  publish(record: RequestLogRecord): void;
}

/**
 * Publishes request-log entries to JetStream after the response is sent: never on the response
 * path, stored durably by the stream, written to the database by auth in batches.
 */
export function createRequestLogPublisher(nc: NatsConnection, ns: string, log: Logger): RequestLogPublisher {
  const js = jetstream(nc);
  const subject = streams(ns).requestLogSubject("gateway");
  const encoder = new TextEncoder();
  return {
    publish(record) {
      js.publish(subject, encoder.encode(JSON.stringify(record))).catch((err: unknown) => {
        log.warn("request log publish failed", { err });
      });
    },
  };
}
