import type { Client } from "@connectrpc/connect";
import type { KeyDistributionService, KeyEntry } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import type { Logger } from "@hb/platform";
import { KeyTable } from "./key-table.ts";

export interface KeySync {
  table: KeyTable;
  /** True while the table is known to hold every acknowledged change (an unexpired lease). */
  serving(): boolean;
  close(): Promise<void>;
}

// An acknowledgement is stamped by auth (in Redis) after the replica sent it, so a lease counted
// from the sending is never longer than auth believes; the margin covers clock rate drift.
const LEASE_MARGIN = 0.95;

/**
 * Keeps the key table in step with auth over one stream: applies each message in order, then
 * acknowledges it, which renews the lease. Any doubt (the stream ends or fails, an
 * acknowledgement is refused, the lease runs out) sends key checks to auth.Verify until a new
 * snapshot (request-auth.ts).
 */
export function startKeySync(
  client: Client<typeof KeyDistributionService>,
  replica: string,
  log: Logger,
  snapshotChunk = 5000,
): KeySync {
  const table = new KeyTable();
  let leaseUntil = 0;
  let streamId = "";
  let leaseMs = 0;
  let stopped = false;
  let current = new AbortController();

  const lose = (why: string) => {
    if (leaseUntil > 0) log.warn("key table out of step; keys are checked by auth until it resyncs", { why });
    leaseUntil = 0;
    const gone = streamId;
    streamId = "";
    // Best effort: a stream auth does not hear released from is waited out until its lease ends.
    if (gone) client.ackKeys({ streamId: gone, release: true }).catch(() => {});
  };

  function ack(id: string, ctrl: AbortController, versions: bigint[]): void {
    const sent = performance.now();
    client.ackKeys({ streamId: id, versions }).then(
      (r) => {
        if (id !== streamId) return;
        if (r.ok) leaseUntil = Math.max(leaseUntil, sent + leaseMs * LEASE_MARGIN);
        else {
          lose("auth gave this stream up");
          ctrl.abort();
        }
      },
      (err: unknown) => {
        // No renewal: the lease runs out on its own unless a later acknowledgement gets through.
        log.debug("key table acknowledgement failed", { err });
      },
    );
  }

  async function run(): Promise<void> {
    let backoff = 100;
    while (!stopped) {
      const ctrl = new AbortController();
      current = ctrl;
      // A snapshot's messages, gathered until its last one: the table is replaced only whole.
      let gathered: KeyEntry[] = [];
      let parts = 0;
      try {
        for await (const msg of client.watchKeys(
          { replica, snapshotChunk },
          { signal: ctrl.signal, timeoutMs: 0 },
        )) {
          if (msg.item.case === "snapshot") {
            const snapshot = msg.item.value;
            parts++;
            if (snapshot.more) {
              gathered.push(...snapshot.entries);
              continue;
            }
            if (gathered.length) snapshot.entries = [...gathered, ...snapshot.entries];
            gathered = [];
            streamId = msg.streamId;
            leaseMs = snapshot.leaseMs;
            log.info("key table synced", { keys: snapshot.entries.length, messages: parts });
            parts = 0;
          } else if (msg.streamId !== streamId) {
            continue;
          }
          if (!table.apply(msg)) continue;
          // The snapshot's baseline was recorded by auth when the stream opened.
          ack(streamId, ctrl, msg.item.case === "snapshot" || msg.version === 0n ? [] : [msg.version]);
          backoff = 100;
        }
        if (!stopped) lose("auth ended the stream");
      } catch (err) {
        if (!stopped) {
          log.debug("key table stream failed", { err });
          lose("the stream failed");
        }
      }
      if (stopped) break;
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 2000);
    }
  }

  const running = run();
  return {
    table,
    serving: () => performance.now() < leaseUntil && table.settings !== undefined,
    close: async () => {
      stopped = true;
      current.abort();
      await running;
      lose("shutting down");
    },
  };
}
