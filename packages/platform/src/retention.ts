import type { Sql } from "./db.ts";
import type { Logger } from "./log.ts";

/** A table that only grows, and the column that dates its rows (timestamptz, ideally indexed). */
export interface RetentionTarget {
  table: string;
  column: string;
}

export interface RetentionOptions {
  /** Rows older than this are removed (the spec keeps every record 30 days). */
  maxAgeDays?: number;
  /** Time between runs; the first run is at start. */
  intervalMs?: number;
  /** Rows removed per statement. */
  batchSize?: number;
}

export interface Retention {
  /** One run over every target now; resolves with the rows removed per table. */
  runOnce(): Promise<Record<string, number>>;
  /** Stops the timer and waits for a run in progress to end after its current batch. */
  stop(): Promise<void>;
}

/**
 * Removes rows older than `maxAgeDays` from each target at start and then every `intervalMs`.
 * Each statement removes at most `batchSize` rows, and runs are repeated until a batch comes back
 * short, so a large backlog is removed in many short transactions instead of one long one that
 * would hold its locks (and bloat the WAL) for minutes. Rows that another transaction holds are
 * skipped (SKIP LOCKED) and removed on a later run, so a purge never waits on the service's own
 * work, and several replicas can run it at once.
 */
export function startRetention(
  sql: Sql,
  targets: RetentionTarget[],
  log: Logger,
  opts: RetentionOptions = {},
): Retention {
  const maxAgeDays = opts.maxAgeDays ?? 30;
  const intervalMs = opts.intervalMs ?? 3600_000;
  const batchSize = opts.batchSize ?? 5000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<Record<string, number>> | undefined;

  const purge = async (t: RetentionTarget): Promise<{ rows: number; statements: number }> => {
    let rows = 0;
    let statements = 0;
    while (!stopped) {
      // ctid picks the rows without knowing the table's key; the sub-select's LIMIT bounds the batch.
      const r = await sql`
        delete from ${sql(t.table)} where ctid = any(array(
          select ctid from ${sql(t.table)}
          where ${sql(t.column)} < now() - make_interval(days => ${maxAgeDays})
          limit ${batchSize} for update skip locked))`;
      rows += r.count;
      statements++;
      if (r.count < batchSize) break;
    }
    return { rows, statements };
  };

  const run = async (): Promise<Record<string, number>> => {
    const removed: Record<string, number> = {};
    for (const t of targets) {
      try {
        const { rows, statements } = await purge(t);
        removed[t.table] = rows;
        if (rows) log.info("old records removed", { table: t.table, rows, statements });
      } catch (err) {
        log.warn("removing old records failed", { table: t.table, err });
      }
    }
    return removed;
  };

  const runOnce = () => {
    const next = (running ?? Promise.resolve()).then(run, run);
    running = next;
    return next;
  };

  const loop = () => {
    void runOnce().finally(() => {
      if (!stopped) {
        timer = setTimeout(loop, intervalMs);
        timer.unref();
      }
    });
  };
  loop();

  return {
    runOnce,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
