/** The baseline: bare node:http answering fixed bytes (the size of a keyed GET /api/v1/ answer). */
import http from "node:http";

const body = process.env.BARE_BODY ?? "{}";
const server = http.createServer((_req, res) => {
  res.writeHead(200, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
