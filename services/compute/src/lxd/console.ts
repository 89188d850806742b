import WebSocket from "ws";
import { byteQueue, type ConsoleSize, type MachineConsole } from "../console/types.ts";
import type { LxdClient, LxdEndpoint } from "./client.ts";

/**
 * The console of an LXD container: `login` run interactively by LXD's exec API, on a terminal of
 * the browser's size, relayed over the exec's websockets. Not the instance's /dev/console
 * (`/1.0/instances/{name}/console`): that carries a getty only where the image's init starts one
 * (Debian's systemd does, the busybox test image's small init does not), and every viewer would
 * share one terminal. `login` is on both images, asks for the user and the root password, and each
 * console is a login session of its own that ends with it (docs/providers.md, "Web console").
 */
export async function openLxdConsole(
  c: LxdClient,
  instance: string,
  size: ConsoleSize,
): Promise<MachineConsole> {
  const op = await c.submit("POST", `/1.0/instances/${encodeURIComponent(instance)}/exec`, {
    command: ["/bin/login"],
    environment: { TERM: "xterm-256color", LANG: "C.UTF-8" },
    interactive: true,
    "wait-for-websocket": true,
    width: size.cols,
    height: size.rows,
  });
  const meta = (await c.operation(op)).metadata as { fds?: Record<string, string> } | null;
  const fds = meta?.fds;
  if (!fds?.["0"] || !fds.control) throw new Error("LXD's exec answered without its websockets");
  const data = await connect(c.endpoint, op, fds["0"]);
  const control = await connect(c.endpoint, op, fds.control).catch((err: unknown) => {
    data.close();
    throw err;
  });
  const out = byteQueue();
  data.on("message", (chunk: Buffer) => out.push(new Uint8Array(chunk)));
  const ended = () => {
    out.end();
    control.close();
  };
  data.on("close", ended);
  data.on("error", ended);
  control.on("error", () => undefined);
  const sendControl = (message: unknown) => {
    if (control.readyState === WebSocket.OPEN) control.send(JSON.stringify(message));
  };
  return {
    output: out.iterable,
    write(bytes) {
      if (data.readyState === WebSocket.OPEN) data.send(bytes, { binary: true });
    },
    resize(next) {
      sendControl({
        command: "window-resize",
        args: { width: String(next.cols), height: String(next.rows) },
      });
    },
    close() {
      // A hang-up, as a terminal closing sends: login and the shell it started end, and LXD then
      // closes the exec's websockets.
      sendControl({ command: "signal", signal: 1 });
      data.close();
      ended();
    },
  };
}

/** One of an exec operation's websockets, on the daemon's unix socket or its HTTPS address. */
function connect(endpoint: LxdEndpoint, op: string, secret: string): Promise<WebSocket> {
  const path = `/1.0/operations/${encodeURIComponent(op)}/websocket?secret=${encodeURIComponent(secret)}`;
  const ws =
    "socketPath" in endpoint
      ? new WebSocket(`ws+unix:${endpoint.socketPath}:${path}`)
      : new WebSocket(`${endpoint.url.replace(/^https:/, "wss:")}${path}`, {
          cert: endpoint.cert,
          key: endpoint.key,
          ca: endpoint.serverCert,
          // As client.ts: trust is pinned by the server certificate given as the CA. Node's TLS
          // takes undefined as "identity fine"; ws's types say boolean for the same hook.
          checkServerIdentity: (() => undefined) as unknown as () => boolean,
          rejectUnauthorized: Boolean(endpoint.serverCert),
        });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}
