/**
 * A TCP proxy in front of PostgreSQL that reads the frontend protocol as it passes, so a test can
 * count what a service process sends for one request: each transaction's statements and its round
 * trips. A round trip is a write from the client that arrives after the server has answered on
 * that connection (or its first write), however many statements it carries: a service's
 * pipelined statements count once, as they cost once in system calls and wake-ups on both sides.
 * Statements are named by their text (prepared ones by the Parse that named them).
 */
import net from "node:net";

export interface WireTransaction {
  /** The role the connection logged in as (hb_billing). */
  user: string;
  /**
   * Statements executed, whitespace collapsed, begin and commit included, each after the number of
   * the round trip that carried it.
   */
  statements: string[];
  roundTrips: number;
  /**
   * Of those, trips that only described a statement before running it (postgres.js does so the
   * first time a connection runs a statement with parameters): `firstUse` were statements new to
   * their connection, `again` the ones it had described before (a statement never reused).
   */
  describeTrips: { firstUse: number; again: number };
  /**
   * It began in a write sent while the connection still awaited an answer: postgres.js pipelines a
   * query onto a busy connection when its pool has none free, and the query then rides on another
   * one's round trip, so its own count says less than it costs alone.
   */
  pipelined: boolean;
}

export interface PgWireProxy {
  port: number;
  /**
   * How late the server's answers reach the client (0 at first). While counting (100 ms,
   * COUNTING_DELAY_MS in test/order-round-trips.test.ts), what the client writes before it has read
   * an answer counts as the one round trip it is, however fast the server answers, and even when
   * the client is held up by a busy machine between two writes.
   */
  answerDelayMs: number;
  /** Every transaction finished (committed or rolled back) since the proxy started. */
  transactions: WireTransaction[];
  /**
   * Every statement run outside a transaction (its own implicit one), as a transaction of one
   * statement; its round trips include those that only described it before it ran.
   */
  autocommitted: WireTransaction[];
  /** Server answers read but not yet passed on, on every connection (the delay holds them). */
  readonly heldAnswers: number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const cstr = (buf: Buffer, at: number) => {
  const end = buf.indexOf(0, at);
  return { text: buf.toString("utf8", at, end), next: end + 1 };
};
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

/** Listens on 127.0.0.1 (a free port) and forwards every connection to `target` (host:port). */
export async function pgWireProxy(target: { host: string; port: number }): Promise<PgWireProxy> {
  const transactions: WireTransaction[] = [];
  const autocommitted: WireTransaction[] = [];
  const sockets = new Set<net.Socket>();
  let held = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);

    let user = "";
    let started = false;
    let pending = Buffer.alloc(0);
    const named = new Map<string, string>();
    const described = new Set<string>();
    let bound = "";
    let open: WireTransaction | undefined;
    let answered = true;
    // Trips outside a transaction that only described a statement: the next one run alone ran it.
    let describedAlone = { firstUse: 0, again: 0 };

    const executed = (text: string, touched: Set<WireTransaction>, fresh: boolean) => {
      const s = oneLine(text);
      if (/^begin\b/i.test(s))
        open = {
          user,
          statements: [],
          roundTrips: 0,
          describeTrips: { firstUse: 0, again: 0 },
          pipelined: !fresh,
        };
      if (!open) {
        const trips = describedAlone.firstUse + describedAlone.again;
        const alone = {
          user,
          statements: [`${trips + (fresh ? 1 : 0)} ${s}`],
          roundTrips: trips,
          describeTrips: describedAlone,
          pipelined: !fresh,
        };
        describedAlone = { firstUse: 0, again: 0 };
        touched.add(alone);
        autocommitted.push(alone);
        return;
      }
      open.statements.push(`${open.roundTrips + (fresh ? 1 : 0)} ${s}`);
      touched.add(open);
      if (/^(commit|rollback|end)\b/i.test(s)) {
        transactions.push(open);
        open = undefined;
      }
    };

    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk);
      const fresh = answered;
      answered = false;
      // The transaction this write continues, and any it begins or ends.
      const touched = new Set<WireTransaction>(open ? [open] : []);
      let runs = 0;
      let describes: "none" | "firstUse" | "again" = "none";
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (!started) {
          if (pending.length < 8) break;
          const len = pending.readInt32BE(0);
          if (pending.length < len) break;
          const code = pending.readInt32BE(4);
          if (code !== SSL_REQUEST) {
            started = true;
            // Parameters after the protocol version: name\0value\0 ... \0
            for (let at = 8; at < len - 1; ) {
              const k = cstr(pending, at);
              const v = cstr(pending, k.next);
              if (k.text === "user") user = v.text;
              at = v.next;
            }
          }
          pending = pending.subarray(len);
          continue;
        }
        if (pending.length < 5) break;
        const len = pending.readInt32BE(1);
        if (pending.length < len + 1) break;
        const type = String.fromCharCode(pending[0]);
        const body = pending.subarray(5, len + 1);
        if (type === "P") {
          const name = cstr(body, 0);
          const text = cstr(body, name.next).text;
          named.set(name.text, text);
          if (describes !== "again") describes = described.has(text) ? "again" : "firstUse";
          described.add(text);
        } else if (type === "B") {
          const portal = cstr(body, 0);
          bound = named.get(cstr(body, portal.next).text) ?? "";
        } else if (type === "E") {
          runs++;
          executed(bound, touched, fresh);
        } else if (type === "Q") {
          runs++;
          for (const s of cstr(body, 0).text.split(";")) if (s.trim()) executed(s, touched, fresh);
        }
        pending = pending.subarray(len + 1);
      }
      if (!fresh) return;
      if (touched.size === 0 && runs === 0 && describes !== "none") describedAlone[describes]++;
      for (const t of touched) {
        t.roundTrips++;
        if (runs === 0 && describes !== "none") t.describeTrips[describes]++;
      }
    });
    // The server's answers reach the client a moment late, each as it came (a client reads an
    // answer split in packets differently from one whole), so that what the client writes before
    // it has read an answer is counted as the one round trip it is, however fast the server is.
    // In the order they came, each held for the delay as it is set now: an answer that arrives once
    // the delay is 0 goes out with those still held, never ahead of them, or the client would read a
    // later answer's rows as an earlier query's (a list read empty in CI once, right after a counted
    // burst).
    const waiting: { at: number; chunk: Buffer }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const drain = () => {
      clearTimeout(timer);
      timer = undefined;
      const now = Date.now();
      while (waiting.length > 0 && waiting[0].at + proxy.answerDelayMs <= now) {
        answered = true;
        client.write(waiting.shift()!.chunk);
        held--;
      }
      if (waiting.length > 0) timer = setTimeout(drain, waiting[0].at + proxy.answerDelayMs - now);
    };
    upstream.on("data", (chunk: Buffer) => {
      waiting.push({ at: Date.now(), chunk });
      held++;
      drain();
    });
    upstream.on("close", () => {
      clearTimeout(timer);
      held -= waiting.length;
      waiting.length = 0;
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const proxy: PgWireProxy = {
    port: (server.address() as net.AddressInfo).port,
    answerDelayMs: 0,
    transactions,
    autocommitted,
    get heldAnswers() {
      return held;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return proxy;
}
