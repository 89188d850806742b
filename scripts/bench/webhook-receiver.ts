/**
 * The webhook bench's receiver, in a process of its own (a partner's endpoint is not inside the
 * publisher): answers 200 to /hook, never answers /hang, and prints `<serviceId> <ms>` for the
 * first arrival of each event. Its first line is the port.
 */
import http from "node:http";

const seen = new Set<string>();
let out: string[] = [];
const server = http.createServer((req, res) => {
  if (req.url === "/hang") return; // never answers: the attempt times out
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = Date.now();
    const id = (JSON.parse(Buffer.concat(chunks).toString()) as { data: { serviceId: string } }).data
      .serviceId;
    if (!seen.has(id)) {
      seen.add(id);
      out.push(`${id} ${at}`);
    }
    res.writeHead(200).end();
  });
});
// Arrivals leave in batches: one write per 50 ms instead of one per delivery.
setInterval(() => {
  if (out.length === 0) return;
  process.stdout.write(`${out.join("\n")}\n`);
  out = [];
}, 50).unref();
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
});
process.on("SIGTERM", () => {
  if (out.length) process.stdout.write(`${out.join("\n")}\n`);
  process.exit(0);
});
