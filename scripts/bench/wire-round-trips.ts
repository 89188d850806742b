/**
 * Round trips to a server counted on the wire, for this process's sockets: a round trip is a write
 * after an answer came back on that socket (or its first write), however many statements or
 * socket writes it carries. postgres.js pipelines the statements one tick starts, and describes
 * an unprepared statement with parameters in a round trip of its own: both show here as they are.
 * Only for benches and tests that own every socket of the process while they count.
 */
import { Socket } from "node:net";

export interface WireCounter {
  /** Round trips since the counter started or was last reset. */
  readonly count: number;
  /**
   * Statements run since then: PostgreSQL's Execute and simple Query messages in what was written
   * (a socket's first write, its start-up message, is not read).
   */
  readonly statements: number;
  reset(): void;
  /** Puts Socket.prototype.write back. */
  stop(): void;
}

export function countWireRoundTrips(): WireCounter {
  let count = 0;
  let statements = 0;
  const answered = new WeakSet<Socket>();
  const watched = new WeakSet<Socket>();
  const write = Socket.prototype.write;
  Socket.prototype.write = function (this: Socket, ...args: Parameters<Socket["write"]>) {
    const chunk = args[0];
    if (!watched.has(this)) {
      watched.add(this);
      this.on("data", () => answered.add(this));
      count++;
    } else {
      if (answered.has(this)) {
        answered.delete(this);
        count++;
      }
      // Messages: a type byte, then their length (itself included) as a 32-bit integer. postgres.js
      // writes whole messages (its connection.js gathers them in one buffer per write).
      if (Buffer.isBuffer(chunk))
        for (let at = 0; at + 5 <= chunk.length; at += 1 + chunk.readInt32BE(at + 1))
          if (chunk[at] === 0x45 /* E */ || chunk[at] === 0x51 /* Q */) statements++;
    }
    return write.apply(this, args);
  } as Socket["write"];
  return {
    get count() {
      return count;
    },
    get statements() {
      return statements;
    },
    reset() {
      count = 0;
      statements = 0;
    },
    stop() {
      Socket.prototype.write = write;
    },
  };
}
