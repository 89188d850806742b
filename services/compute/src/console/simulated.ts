import type { MachineRow } from "../machines.ts";
import { byteQueue, type ConsoleSize, type MachineConsole } from "./types.ts";

const text = (s: string) => new TextEncoder().encode(s);
const PROMPT = "sim$ ";

/** The first line of every simulated console: it says what it is. */
export const SIMULATED_BANNER = "Simulated console: no machine runs behind this service";

/**
 * The simulator's console: no machine to log in to, so it says so and echoes what is typed, a line
 * at a time, as a terminal with echo on would. It lets the whole path (page, WebSocket, gateway,
 * compute) be used and tested without LXD.
 */
export function simulatedConsole(m: MachineRow, size: ConsoleSize): MachineConsole {
  const out = byteQueue();
  let line = "";
  let cols = size.cols;
  out.push(
    text(
      `${SIMULATED_BANNER} (${m.hostname}, simulator driver).\r\n` +
        'Each line you type is echoed back; "size" shows the terminal\'s size, "exit" closes it.\r\n' +
        PROMPT,
    ),
  );
  const answer = (cmd: string): string | undefined => {
    if (cmd === "exit") return undefined;
    if (cmd === "size") return `${cols}x${size.rows}`;
    return cmd === "" ? "" : `echo: ${cmd}`;
  };
  return {
    output: out.iterable,
    write(data) {
      for (const ch of new TextDecoder().decode(data)) {
        if (ch === "\r" || ch === "\n") {
          const reply = answer(line.trim());
          line = "";
          if (reply === undefined) {
            out.push(text("\r\nlogout\r\n"));
            out.end();
            return;
          }
          out.push(text(`\r\n${reply ? `${reply}\r\n` : ""}${PROMPT}`));
        } else if (ch === "\x7f" || ch === "\b") {
          if (line.length > 0) {
            line = line.slice(0, -1);
            out.push(text("\b \b"));
          }
        } else if (ch >= " ") {
          line += ch;
          out.push(text(ch));
        }
      }
    },
    resize(next) {
      cols = next.cols;
      size = next;
    },
    close: () => out.end(),
  };
}
