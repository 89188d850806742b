/**
 * A cap on the private stacks alive at once across every test process, so `npm test` stays
 * within its PostgreSQL connection budget whatever files happen to run side by side (a stack
 * holds about ten connections; the shared stack about eighteen).
 *
 * The runner serves the slots over HTTP on 127.0.0.1. A test asks for k slots with a request the
 * server answers once k are free, in the order asked, and the slots come back when that request's
 * connection closes: when the stack is closed, or when its process dies, so a crashed test file
 * cannot keep them.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface SlotServer {
  url: string;
  /** The most slots held at once, how long tests waited for theirs, and how many wait now. */
  stats(): { mostHeld: number; waits: number; longestWaitMs: number; queued: number };
  close(): Promise<void>;
}

export async function startSlotServer(total: number): Promise<SlotServer> {
  let free = total;
  let mostHeld = 0;
  let waits = 0;
  let longestWaitMs = 0;
  const queue: { n: number; asked: number; res: http.ServerResponse }[] = [];
  const grant = () => {
    while (queue.length > 0 && queue[0].n <= free) {
      const { n, asked, res } = queue.shift()!;
      free -= n;
      mostHeld = Math.max(mostHeld, total - free);
      const waited = Date.now() - asked;
      if (waited > 50) waits++;
      longestWaitMs = Math.max(longestWaitMs, waited);
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("granted\n");
    }
  };
  const server = http.createServer((req, res) => {
    const asked = Number(new URL(req.url ?? "/", "http://slots").searchParams.get("n"));
    // More than there are would wait for ever: such a request gets all of them.
    const n = Math.min(total, Number.isInteger(asked) && asked > 0 ? asked : 1);
    const entry = { n, asked: Date.now(), res };
    queue.push(entry);
    grant();
    req.socket.once("close", () => {
      const i = queue.indexOf(entry);
      if (i !== -1)
        queue.splice(i, 1); // it stopped waiting
      else free += n;
      grant();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    stats: () => ({ mostHeld, waits, longestWaitMs, queued: queue.length }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Waits for `n` slots of the run's cap (HB_STACK_SLOTS_URL, set by `npm test`); resolves to the
 * function that gives them back. Outside `npm test` there is no cap and nothing to wait for.
 */
export function acquireSlots(n: number, url = process.env.HB_STACK_SLOTS_URL): Promise<() => void> {
  if (!url) return Promise.resolve(() => {});
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}?n=${n}`, { agent: false }, (res) => {
      res.once("data", () => {
        // Held open until released; it must not keep the test process alive on its own.
        req.socket?.unref();
        resolve(() => req.destroy());
      });
    });
    req.once("error", reject);
  });
}
