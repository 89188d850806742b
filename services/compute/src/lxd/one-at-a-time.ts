/**
 * Runs tasks one after another per key: a task starts when every earlier task of its key has
 * ended (fulfilled or not). Tasks of different keys run side by side.
 */
export function oneAtATimePerKey() {
  const tails = new Map<string, Promise<unknown>>();
  return async function run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = tails.get(key) ?? Promise.resolve();
    const result = before.then(task, task);
    const tail = result.catch(() => undefined);
    tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}
