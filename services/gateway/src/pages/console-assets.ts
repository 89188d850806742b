import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { PageAssets } from "./layout.ts";

export const CONSOLE_ASSETS: PageAssets = {
  scripts: ["/assets/xterm.js", "/assets/console.js"],
  styles: ["/assets/xterm.css"],
};

/**
 * The files of the console page: xterm.js and its stylesheet read from the installed @xterm/xterm
 * (the gateway serves them, so the page loads nothing from elsewhere) and the page's own script.
 */
export function consoleAssets(): { path: string; type: string; body: Buffer }[] {
  const lib = path.dirname(fileURLToPath(import.meta.resolve("@xterm/xterm")));
  return [
    { path: "/assets/xterm.js", type: "text/javascript", body: readFileSync(path.join(lib, "xterm.js")) },
    {
      path: "/assets/xterm.css",
      type: "text/css",
      body: readFileSync(path.join(lib, "..", "css", "xterm.css")),
    },
    {
      path: "/assets/console.js",
      type: "text/javascript",
      body: readFileSync(path.join(import.meta.dirname, "console.js")),
    },
  ];
}
