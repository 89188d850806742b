import type { Response } from "express";
import type { z } from "zod";
import { route } from "../route.ts";
import type { streamDelivery, streamError, streamReady } from "../wire/webhook-stream.ts";

const description = `Server-sent events (text/event-stream) carrying every webhook event of the partner as it is
raised, each exactly as its delivery would be: the same body and headers, signed with the current
signing secret. For building a receiver on a machine without a public URL
(\`hb webhooks listen --forward-to http://localhost:3000/hook\`); deliveries to the endpoint on
file are unaffected, and a URL need not be on file. Events are sent while the partner profile is
active.

- \`event: ready\`, data \`{"partnerId","openStreams","heartbeatSeconds"}\`: the stream is open;
  events raised before it are not sent.
- \`event: delivery\`, \`id:\` the X-Webhook-Id, data \`{"id","event","headers","body"}\`: POST
  \`body\` unchanged with \`headers\` to your receiver.
- \`: heartbeat\` comments keep proxies from closing an idle stream.
- \`event: error\`, data \`{"code","error"}\`: the stream ends; reconnect.

A partner may hold a few streams open at once; one more is 409 CONFLICT.`;

/** One SSE event; data is one line of JSON, so it needs no splitting. */
function writeEvent<T>(res: Response, event: string, data: T, id?: string): void {
  res.write(`${id ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * GET /reseller/webhooks/stream. The webhooks service builds and signs each event (the gateway
 * never holds a signing secret); this relays its stream as SSE, with heartbeats, and cancels it
 * when the client goes away.
 */
export function webhookStreamRoute(heartbeatMs: number) {
  return route({
    method: "get",
    path: "/reseller/webhooks/stream",
    tag: "Reseller",
    summary: "Stream the partner's webhook events as signed deliveries (server-sent events)",
    description,
    auth: { scope: "account", signed: true, write: false, permissions: ["view_services"] },
    rawContentType: "text/event-stream",
    errors: ["CONFLICT"],
    handler: async ({ clients, principal, req, res }) => {
      const gone = new AbortController();
      res.on("close", () => gone.abort());
      const feed = clients.webhooks
        .streamEvents({ partnerId: principal.customerId }, { signal: gone.signal, timeoutMs: 0 })
        [Symbol.asyncIterator]();
      // The first message (or refusal) comes before any header is sent, so a refusal is still an
      // ordinary JSON error answer.
      const first = await feed.next();
      if (first.done || first.value.item.case !== "opened") throw new Error("event stream did not open");
      res.writeHead(200, {
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-cache, no-transform",
        "X-Accel-Buffering": "no",
      });
      req.socket.setNoDelay(true);
      writeEvent<z.input<typeof streamReady>>(res, "ready", {
        partnerId: principal.customerId,
        openStreams: first.value.item.value.openStreams,
        heartbeatSeconds: Math.max(1, Math.round(heartbeatMs / 1000)),
      });
      const heartbeat = setInterval(() => res.write(": heartbeat\n\n"), heartbeatMs);
      try {
        for (let next = await feed.next(); !next.done; next = await feed.next()) {
          const item = next.value.item;
          if (item.case !== "delivery") continue;
          const { id, event, headers, body } = item.value;
          writeEvent<z.input<typeof streamDelivery>>(res, "delivery", { id, event, headers, body }, id);
        }
      } catch {
        // The webhooks service went away or failed: the client is told below and reconnects.
      } finally {
        clearInterval(heartbeat);
        if (!gone.signal.aborted) {
          writeEvent<z.input<typeof streamError>>(res, "error", {
            code: "SERVICE_UNAVAILABLE",
            error: "The event stream ended; reconnect",
          });
        }
        gone.abort();
        res.end();
      }
      return undefined;
    },
  });
}
