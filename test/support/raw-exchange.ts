import net from "node:net";

/**
 * Writes `chunks` on a raw TCP connection and collects what comes back until the server closes the
 * connection, or until `deadlineMs` (then `closed` is false and the socket is destroyed). For the
 * tests of what a server does with a request it has not fully received.
 */
export function rawExchange(
  host: string,
  port: number,
  chunks: string[],
  deadlineMs = 5000,
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    let text = "";
    socket.on("data", (d) => {
      text += d.toString();
    });
    socket.on("error", () => {});
    const deadline = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, deadlineMs);
    socket.on("close", () => {
      clearTimeout(deadline);
      resolve({ text, closed: true });
    });
    for (const c of chunks) socket.write(c);
  });
}
