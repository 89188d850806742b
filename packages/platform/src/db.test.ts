import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { connectDb, localSocketPath, socketAccepts } from "./db.ts";

describe("localSocketPath", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), "hb-pg-socket-"));
    // Only the name is looked at: PostgreSQL names its socket after the port it listens on.
    writeFileSync(path.join(dir, ".s.PGSQL.6543"), "");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("names the socket of a server on this host for the URL's port", () => {
    for (const host of ["127.0.0.1", "localhost", "::1", "[::1]"])
      assert.equal(localSocketPath(host, 6543, dir), path.join(dir, ".s.PGSQL.6543"), host);
  });

  it("leaves the connection on TCP for another host, a port with no socket, or no directory", () => {
    assert.equal(localSocketPath("db.example.com", 6543, dir), undefined);
    assert.equal(localSocketPath("127.0.0.2", 6543, dir), undefined);
    assert.equal(localSocketPath("127.0.0.1", 6544, dir), undefined);
    assert.equal(localSocketPath("127.0.0.1", 6543, ""), undefined);
  });
});

// Against the real PostgreSQL of `npm test`, where Debian keeps its socket.
const url = process.env.DATABASE_URL;
const debianDir = "/var/run/postgresql";
const serverSocket =
  url && localSocketPath(new URL(url).hostname, Number(new URL(url).port || 5432), debianDir);

describe("connectDb's transport", {
  skip: !serverSocket && "needs DATABASE_URL on this host and PostgreSQL's socket in /var/run/postgresql",
}, () => {
  const local = async (socketDir: string) => {
    const sql = connectDb(url!, "public", 1, 0, socketDir);
    try {
      const [row] = await sql<{ local: boolean }[]>`
          select client_addr is null as local from pg_stat_activity where pid = pg_backend_pid()`;
      return row.local;
    } finally {
      await sql.end({ timeout: 5 });
    }
  };

  it("goes through the server's Unix socket when the directory holds it, and over TCP without one", async () => {
    assert.equal(await local(debianDir), true);
    assert.equal(await local(""), false);
  });

  it("socketAccepts: yes where the role may connect through the socket, no where there is none", async () => {
    const empty = mkdtempSync(path.join(tmpdir(), "hb-pg-socket-"));
    try {
      assert.equal(existsSync(path.join(empty, ".s.PGSQL.5432")), false);
      assert.equal(await socketAccepts(url!, debianDir), true);
      assert.equal(await socketAccepts(url!, empty), false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
