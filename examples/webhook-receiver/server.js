/**
 * A webhook receiver for reseller partners, on plain Node (20 or later) with no framework:
 *   WEBHOOK_SECRET=whsec_... PORT=9000 node server.js
 * It reads the raw body before parsing, verifies it with @hb/webhook-signature (signature in
 * constant time, then the signed time within 5 minutes), answers 2xx at once, and skips
 * deliveries it has already processed (same X-Webhook-Id: delivery is at least once).
 */
import http from "node:http";
import { verifyWebhook, WebhookVerificationError } from "@hb/webhook-signature";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  process.stderr.write("Set WEBHOOK_SECRET to your partner signing secret.\n");
  process.exit(2);
}
const processed = new Set(); // in production: a table with a unique key on the delivery id

const server = http.createServer((req, res) => {
  if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let delivery;
    try {
      // The exact bytes that were signed: never re-serialise before verifying.
      delivery = verifyWebhook({ body: Buffer.concat(chunks), headers: req.headers, secret });
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      process.stdout.write(`refused ${err.code}: ${err.message}\n`);
      return void res.writeHead(400, { "content-type": "text/plain" }).end(err.code);
    }
    if (processed.has(delivery.id)) return void res.writeHead(200).end("duplicate");
    processed.add(delivery.id);
    res.writeHead(200).end("ok");
    // Slow work goes after the answer: the platform waits 30 s at most.
    process.stdout.write(`${delivery.id} ${delivery.event} ${JSON.stringify(delivery.data)}\n`);
  });
});

server.listen(Number(process.env.PORT ?? 9000), process.env.HOST ?? "127.0.0.1", () => {
  process.stdout.write(`listening on http://${process.env.HOST ?? "127.0.0.1"}:${server.address().port}/\n`);
});
