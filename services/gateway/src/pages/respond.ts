import type { Response } from "express";
import type { Html } from "./html.ts";

/**
 * Every page: no caching (pages show keys and logs), no framing, scripts and styles only from the
 * gateway itself, and no Referer (a set-password link's token must not leak to another site).
 * `terminalStyles`: the console page's terminal (xterm.js) writes its colours and cell sizes into
 * <style> elements it makes, which 'self' refuses; that page alone allows inline styles. Scripts
 * stay 'self' on every page.
 */
export function sendPage(res: Response, body: Html, status = 200, terminalStyles = false): void {
  res
    .status(status)
    .set({
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": `default-src 'none'; style-src 'self'${terminalStyles ? " 'unsafe-inline'" : ""}; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
    })
    .send(body.text);
}
