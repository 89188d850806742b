import type { Response } from "express";
import type { Html } from "./html.ts";

/**
 * Every page: no caching (pages show keys and logs), no framing, scripts and styles only from the
 * gateway itself, and no Referer (a set-password link's token must not leak to another site).
 */
export function sendPage(res: Response, body: Html, status = 200): void {
  res
    .status(status)
    .set({
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy":
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
    })
    .send(body.text);
}
