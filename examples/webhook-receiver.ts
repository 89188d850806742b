/**
 * A runnable webhook receiver for reseller partners:
 *   WEBHOOK_SECRET=whsec_... PORT=9000 node examples/webhook-receiver.ts
 * It reads the raw body before parsing, verifies X-Webhook-Signature in constant time, answers 2xx
 * quickly, and ignores deliveries it has already processed (same X-Webhook-Id).
 */
import http from "node:http";
import { verifyWebhookSignature } from "@hb/platform";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  process.stderr.write("Set WEBHOOK_SECRET to your partner signing secret.\n");
  process.exit(2);
}
const processed = new Set<string>(); // use a database table with a unique key in production

const server = http.createServer((req, res) => {
  if (req.method !== "POST") return void res.writeHead(405).end();
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const raw = Buffer.concat(chunks); // the exact bytes that were signed: never re-serialise
    if (!verifyWebhookSignature(secret, raw, req.headers["x-webhook-signature"] as string | undefined)) {
      return void res.writeHead(401).end("bad signature");
    }
    const id = req.headers["x-webhook-id"] as string;
    if (processed.has(id)) return void res.writeHead(200).end("duplicate");
    processed.add(id);
    const event = JSON.parse(raw.toString("utf8")) as {
      event: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
    process.stdout.write(`${event.timestamp} ${event.event} ${JSON.stringify(event.data)}\n`);
    res.writeHead(200).end("ok");
  });
});
server.listen(Number(process.env.PORT ?? 9000), () => {
  process.stdout.write(`listening on :${(server.address() as { port: number }).port}\n`);
});
