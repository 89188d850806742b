/**
 * The queue both kinds of group commit run on (group-commit.ts for pays, transaction-group.ts for
 * orders): a request that arrives while a group is being run waits, and those waiting form the
 * next group (at most `max`); the first request of a quiet moment waits only for the rest of its
 * turn of the event loop (the requests that came in the same read of the socket). One group runs
 * at a time, so a group's size follows the load.
 */
export interface Waiter {
  reject(err: unknown): void;
}

/** Queues a waiter; `runGroup` settles every waiter of the group it is given. */
export function waitTogether<W extends Waiter>(
  max: number,
  runGroup: (group: W[]) => Promise<void>,
): (w: W) => void {
  const queue: W[] = [];
  let flushing = false;
  async function flush(): Promise<void> {
    while (queue.length > 0) {
      const group = queue.splice(0, max);
      try {
        await runGroup(group);
      } catch (err) {
        // Not expected (runGroup settles its own); never leave a request waiting.
        for (const w of group) w.reject(err);
      }
    }
    flushing = false;
  }
  return (w) => {
    queue.push(w);
    if (flushing) return;
    flushing = true;
    setImmediate(() => void flush());
  };
}

/** Orders a group by a key (the payer's id), the same way for both kinds of group. */
export const byKey =
  <W>(key: (w: W) => string) =>
  (a: W, b: W): number => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
