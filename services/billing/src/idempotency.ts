import { apiError, type TxSql } from "@hb/platform";

/**
 * Idempotency-Key support for calls that move money: the first result for a key is stored in the
 * same transaction as the money movement; a repeat with the same body returns it; a repeat with
 * another body is refused. Keys are kept 24 hours.
 */
export async function replay(
  tx: TxSql,
  personId: string,
  operation: string,
  key: string,
  requestHash: string,
): Promise<string | undefined> {
  if (!key) return undefined;
  if (key.length > 255) throw keyTooLong();
  // Serialise concurrent requests with the same key. The read is sent with the lock, in the same
  // round trip: PostgreSQL runs it once the lock is held, and it sees what the holder committed.
  const [, [row]] = await Promise.all([
    tx`select pg_advisory_xact_lock(hashtext(${keyLockName(personId, operation, key)}))`.execute(),
    tx<{ request_hash: string; response: string }[]>`
      select request_hash, response from idempotency
      where person_id = ${personId} and operation = ${operation} and key = ${key}
        and created_at > now() - interval '24 hours'`.execute(),
  ]);
  if (!row) return undefined;
  if (row.request_hash !== requestHash) {
    throw keyReused();
  }
  return row.response;
}

export const keyTooLong = () => apiError("BAD_REQUEST", "Idempotency-Key must be at most 255 characters");

export const keyReused = () =>
  apiError("BAD_REQUEST", "This Idempotency-Key was already used with a different request body", {
    violations: [{ field: "Idempotency-Key", message: "reused with a different body" }],
  });

/** The name of the key's lock (pg_advisory_xact_lock of its hashtext): one per person, operation and key. */
export const keyLockName = (personId: string, operation: string, key: string) =>
  `${personId}:${operation}:${key}`;

/**
 * Keeps the key's answer in the transaction that moved the money. Returns the statement, started:
 * handed to transactPipelined it goes with the commit, in the same round trip.
 */
export function remember(
  tx: TxSql,
  personId: string,
  operation: string,
  key: string,
  requestHash: string,
  response: string,
): Promise<unknown> {
  if (!key) return Promise.resolve();
  return tx`insert into idempotency (person_id, operation, key, request_hash, response)
    values (${personId}, ${operation}, ${key}, ${requestHash}, ${response})
    on conflict (person_id, operation, key) do update
      set request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at`.execute();
}
