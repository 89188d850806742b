// The console page's terminal (customer/service/console.ts): xterm.js on the console's WebSocket.
// Keystrokes go up as binary frames, the machine's output comes down as binary frames, and a text
// frame tells the other side the terminal's new size. Without JavaScript the page says it needs it.
const box = document.getElementById("console");
const statusLine = document.getElementById("console-status");
const say = (text) => {
  if (statusLine) statusLine.textContent = text;
};
const CLOSED = {
  ended: "The console session ended.",
  suspended: "The console closed: the service was suspended.",
  terminated: "The console closed: the service ended.",
  stopped: "The console closed: the machine stopped.",
  "session-ended": "The console closed: you were signed out.",
  "not-permitted": "The console closed: you may no longer use it.",
  shutdown: "The console closed: the platform restarted. Open it again.",
};
if (box && window.Terminal) {
  const term = new window.Terminal({ cursorBlink: true, scrollback: 2000, fontSize: 14 });
  term.open(box);
  const url = new URL(box.dataset.socket, window.location.href);
  url.protocol = window.location.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("cols", String(term.cols));
  url.searchParams.set("rows", String(term.rows));
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  let opened = false;
  ws.addEventListener("open", () => {
    opened = true;
    say("Connected. Type into the terminal.");
    term.focus();
  });
  ws.addEventListener("message", (e) => {
    if (e.data instanceof ArrayBuffer) term.write(new Uint8Array(e.data));
  });
  ws.addEventListener("close", (e) => {
    if (!opened) {
      say(
        "The console could not be opened: its link is used or expired, or the machine is not running. Open it again.",
      );
      return;
    }
    say(CLOSED[e.reason] ?? "The console closed.");
    term.options.disableStdin = true;
  });
  const encoder = new TextEncoder();
  term.onData((data) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(data));
  });
  term.onResize(({ cols, rows }) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "resize", cols, rows }));
  });
}
