import type http from "node:http";
import type net from "node:net";

export interface RequestDeadlines {
  /** Longest a client may take to send a request's headers. */
  headersTimeoutMs: number;
  /** Longest a client may take to send a whole request, body included (not the answer). */
  requestTimeoutMs: number;
}

// What Node itself answers when its own deadlines run out.
const TIMEOUT_ANSWER = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n";

/**
 * Answers 408 and closes a connection whose request's headers, or whole request, do not arrive in
 * time. In place of Node's `headersTimeout`/`requestTimeout` (which must be off on `server`):
 * Node judges those on a timer, and timers run before the event loop reads the sockets, so a
 * process starved of CPU refused a request that had arrived complete and in time but that it had
 * not read yet ("other side closed", a 408 on the event stream). Here each deadline is judged in
 * a `setImmediate` after its timer: immediates run after the loop's poll phase, so what a socket
 * had received by then has been read and parsed first, however late the process got to run.
 */
export function enforceRequestDeadlines(server: http.Server, limits: RequestDeadlines): void {
  const connections = new WeakMap<net.Socket, ConnectionDeadlines>();
  server.on("connection", (socket: net.Socket) => connections.set(socket, watchConnection(socket, limits)));
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) =>
    connections.get(req.socket)?.received(req, res),
  );
  // An upgraded connection (the web console's WebSocket) is no longer HTTP: its request came whole.
  server.on("upgrade", (req: http.IncomingMessage) => connections.get(req.socket)?.upgraded());
}

interface ConnectionDeadlines {
  /** A request's headers are in: from now its body is timed, then the next request's headers. */
  received(req: http.IncomingMessage, res: http.ServerResponse): void;
  /** The connection left HTTP (a WebSocket): no deadline applies any more. */
  upgraded(): void;
}

function watchConnection(socket: net.Socket, limits: RequestDeadlines): ConnectionDeadlines {
  // One deadline at a time per connection: the headers', then the body's, then the next headers'.
  // A judgement still queued when the deadline changes is void (generation).
  let generation = 0;
  let timer: NodeJS.Timeout | undefined;
  // When the request being received began, as far as known. A new connection must send a request,
  // so its first one counts from acceptance, as Node's own deadline did.
  let begunAt: number | undefined = Date.now();
  let latest: http.ServerResponse | undefined;

  const judgeAfter = (ms: number, judge: () => void) => {
    clearTimeout(timer);
    if (socket.destroyed) return;
    const current = ++generation;
    timer = setTimeout(() => {
      setImmediate(() => {
        if (current === generation && !socket.destroyed) judge();
      });
    }, ms);
  };
  socket.once("close", () => {
    generation++;
    clearTimeout(timer);
  });

  const refuse = (res?: http.ServerResponse) => {
    // Once an answer has begun, a 408 would corrupt it: only close (as Node does).
    if (socket.writable && !res?.headersSent) socket.write(TIMEOUT_ANSWER);
    socket.destroy();
  };

  const awaitHeaders = () => {
    const idleBytes = socket.bytesRead;
    const judge = () => {
      if (begunAt !== undefined) return refuse();
      // A kept-alive connection may idle (its own timeout closes it). Bytes since the last answer
      // mean a request began within the last period, when exactly is not known: it gets one more
      // full period from now, so a slow sender is refused within twice the deadline of its first
      // byte and no client gets less than the deadline.
      if (socket.bytesRead !== idleBytes) begunAt = Date.now();
      judgeAfter(limits.headersTimeoutMs, judge);
    };
    judgeAfter(limits.headersTimeoutMs, judge);
  };
  awaitHeaders();

  return {
    upgraded() {
      generation++;
      clearTimeout(timer);
    },
    received(req, res) {
      latest = res;
      const began = begunAt ?? Date.now();
      begunAt = undefined;
      judgeAfter(Math.max(0, began + limits.requestTimeoutMs - Date.now()), () => {
        if (!req.complete) refuse(res);
      });
      res.once("finish", () => {
        // A pipelined request already received has its own deadline running.
        if (res !== latest) return;
        // Node reads (or discards) the rest of a body answered early: the next request's
        // headers are timed once it has.
        if (req.complete) awaitHeaders();
        else req.once("end", awaitHeaders);
      });
    },
  };
}
