import {
  type BatchConsumer,
  consumeBatches,
  type Logger,
  type NatsLink,
  type RequestLogRecord,
  type Sql,
  streams,
} from "@hb/platform";

/**
 * Stores the gateway's request-log entries in batches, off the response path, and keeps each
 * key's last-used time and address. A batch is committed before it is acked, so nothing is lost;
 * a redelivered batch can duplicate entries, which only a log tolerates.
 */
export function startRequestLogConsumer(sql: Sql, nats: NatsLink, ns: string, log: Logger): BatchConsumer {
  const s = streams(ns);
  const durable = "auth-request-log";
  return consumeBatches(
    nats,
    { stream: s.requestLog.name, durable, filterSubject: s.requestLog.subjects[0] },
    log,
    async (msgs) => {
      const records: RequestLogRecord[] = [];
      for (const m of msgs) {
        try {
          // The gateway publishes batches (arrays); a single entry is accepted too.
          const value = m.json<RequestLogRecord | RequestLogRecord[]>();
          records.push(...(Array.isArray(value) ? value : [value]));
        } catch {
          log.warn("dropping unreadable request-log message");
        }
      }
      if (records.length === 0) return;
      const rows = records.map((r) => ({
        key_id: r.keyId,
        customer_id: r.customerId,
        method: r.method,
        endpoint: r.endpoint.slice(0, 500),
        status_code: r.status,
        source_ip: r.ip,
        duration_ms: Math.round(r.durationMs),
        at: r.at,
      }));
      const latest = new Map<string, RequestLogRecord>();
      for (const r of records) {
        const seen = latest.get(r.keyId);
        if (!seen || seen.at < r.at) latest.set(r.keyId, r);
      }
      await sql.begin(async (tx) => {
        await tx`insert into request_log ${tx(rows)}`;
        for (const r of latest.values()) {
          await tx`update api_keys set last_used_at = ${r.at}, last_used_ip = ${r.ip}
          where id = ${r.keyId} and (last_used_at is null or last_used_at < ${r.at})`;
        }
      });
    },
  );
}
