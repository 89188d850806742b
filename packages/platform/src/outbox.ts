import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { EventSchema } from "@hb/contracts/hb/events/v1/events_pb";
import type { Sql, TxSql } from "./db.ts";
import { newId } from "./ids.ts";
import type { Logger } from "./log.ts";
import { jetstream, type NatsConnection, streams } from "./nats.ts";

/** SQL for the outbox table; every service that emits events includes it in a migration. */
export const outboxTableSql = `
create table if not exists outbox (
  id uuid primary key,
  subject text not null,
  payload bytea not null,
  created_at timestamptz not null default clock_timestamp(),
  published_at timestamptz
);
create index if not exists outbox_unpublished on outbox (created_at, id) where published_at is null;
`;

export type EventInit = Omit<MessageInitShape<typeof EventSchema>, "id" | "occurredAt" | "$typeName">;

/**
 * Records an event in the same transaction as the change it describes. The relay publishes it
 * after commit; a crash in between only delays it.
 */
export async function writeOutbox(tx: TxSql, ns: string, init: EventInit): Promise<string> {
  const id = newId();
  const event = create(EventSchema, { ...init, id, occurredAt: timestampNow() });
  const subject = streams(ns).eventSubject(event.type);
  await tx`insert into outbox (id, subject, payload) values (${id}, ${subject}, ${Buffer.from(toBinary(EventSchema, event))})`;
  await tx`select pg_notify('outbox', '')`;
  return id;
}

export interface OutboxRelay {
  stop(): Promise<void>;
  /** Publishes whatever is pending now (tests, shutdown). */
  flush(): Promise<number>;
}

/**
 * Publishes committed outbox rows to JetStream with Nats-Msg-Id = event id, so a re-publish after
 * a crash is dropped by the stream's duplicate window. Rows are claimed with SKIP LOCKED so
 * several replicas can relay at once.
 */
export function startOutboxRelay(sql: Sql, nc: NatsConnection, log: Logger, pollMs = 500): OutboxRelay {
  const js = jetstream(nc);
  let stopped = false;
  let wake: (() => void) | undefined;

  const flush = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await sql.begin(async (tx) => {
        const rows = await tx<{ id: string; subject: string; payload: Buffer }[]>`
          select id, subject, payload from outbox where published_at is null
          order by created_at, id limit 200 for update skip locked`;
        for (const row of rows) {
          await js.publish(row.subject, row.payload, { msgID: row.id, timeout: 5000 });
        }
        if (rows.length) {
          await tx`update outbox set published_at = clock_timestamp() where id in ${tx(rows.map((r) => r.id))}`;
        }
        return rows.length;
      });
      total += n;
      if (n < 200) return total;
    }
  };

  const listener = sql
    .listen("outbox", () => wake?.())
    .catch((err: unknown) => {
      log.warn("outbox listen failed; polling only", { err });
      return undefined;
    });

  const loop = (async () => {
    let lastPurge = 0;
    while (!stopped) {
      try {
        await flush();
        if (Date.now() - lastPurge > 3600_000) {
          lastPurge = Date.now();
          await sql`delete from outbox where published_at < now() - interval '1 day'`;
        }
      } catch (err) {
        log.warn("outbox relay failed, retrying", { err });
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  })();

  return {
    flush,
    stop: async () => {
      stopped = true;
      wake?.();
      await loop;
      const l = await listener;
      await l?.unlisten();
    },
  };
}
