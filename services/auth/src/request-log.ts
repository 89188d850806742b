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
      const latest = new Map<string, RequestLogRecord>();
      for (const r of records) {
        const seen = latest.get(r.keyId);
        if (!seen || seen.at < r.at) latest.set(r.keyId, r);
      }
      const keys = [...latest.values()];
      // Each column goes as one array: a statement carries at most 65,534 parameters, and a batch
      // of the gateway's batches after a backlog holds far more entries than a row per parameter
      // group allows (8,191). Such a batch failed for ever and the log stopped (issue 13).
      await sql.begin(async (tx) => {
        await Promise.all([
          tx`insert into request_log (key_id, customer_id, method, endpoint, status_code, source_ip, duration_ms, at)
            select * from unnest(
              ${records.map((r) => r.keyId)}::uuid[], ${records.map((r) => r.customerId)}::uuid[],
              ${records.map((r) => r.method)}::text[], ${records.map((r) => r.endpoint.slice(0, 500))}::text[],
              ${records.map((r) => r.status)}::int[], ${records.map((r) => r.ip)}::text[],
              ${records.map((r) => Math.round(r.durationMs))}::int[], ${records.map((r) => r.at)}::timestamptz[])`.execute(),
          tx`update api_keys k set last_used_at = u.at, last_used_ip = u.ip
            from unnest(${keys.map((r) => r.keyId)}::uuid[], ${keys.map((r) => r.at)}::timestamptz[],
              ${keys.map((r) => r.ip)}::text[]) as u(id, at, ip)
            where k.id = u.id and (k.last_used_at is null or k.last_used_at < u.at)`.execute(),
        ]);
      });
    },
  );
}
