import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import postgres from "postgres";
import type { Logger } from "./log.ts";

export type Sql = postgres.Sql;
export type TxSql = postgres.TransactionSql;

/**
 * One pool per process. Each service works only in its own schema (search_path). `socketDir`
 * (DATABASE_SOCKET_DIR): where a PostgreSQL on this host keeps its Unix socket; see `localSocketPath`.
 */
export function connectDb(url: string, schema: string, max = 10, idleTimeoutS = 0, socketDir = ""): Sql {
  return postgres(url, {
    max,
    // postgres.js reads 0 as "never close an idle connection".
    idle_timeout: idleTimeoutS,
    onnotice: () => {},
    connection: { search_path: schema, application_name: schema },
    // numeric and bigint stay strings: money is never converted to binary floating point.
    types: {},
    // postgres.js takes a socket factory (its connection.js reads options.socket); its types omit it.
    ...({ socket: (o: SocketOptions) => connectSocket(o, socketDir) } as object),
  });
}

/** What postgres.js hands its socket factory: the URL's hosts and ports, or a socket path it was given. */
interface SocketOptions {
  host: string[];
  port: number[];
  path?: string | false;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "[::1]", "localhost"]);

/**
 * The Unix socket of the PostgreSQL a URL names, when that is a server on this host (a loopback
 * address) and `dir` holds its socket (`.s.PGSQL.<port>`, the file the server makes for the port it
 * listens on); else undefined, and the connection goes over TCP as the URL says. Every statement is
 * a write and a read on this connection, and on loopback TCP each write also runs the TCP stack of
 * both ends: over five alternated rounds the order path spent 6% less of the machine per order over
 * the socket, PostgreSQL 8% less (docs/benchmarks.md, "Issue 31, 2026-12-01 (third session)").
 */
export function localSocketPath(host: string, port: number, dir: string): string | undefined {
  if (!dir || !LOOPBACK.has(host)) return undefined;
  const file = path.join(dir, `.s.PGSQL.${port}`);
  return existsSync(file) ? file : undefined;
}

/**
 * Whether `url`'s role may connect through the Unix socket `localSocketPath` finds in `dir`: the
 * server's rules for socket connections (pg_hba.conf's `local` lines) can differ from those for
 * TCP, as Debian's do (peer against a password), so the launcher asks once before it chooses.
 */
export async function socketAccepts(url: string, dir: string): Promise<boolean> {
  const u = new URL(url);
  if (!localSocketPath(u.hostname, Number(u.port || 5432), dir)) return false;
  const sql = connectDb(url, "public", 1, 0, dir);
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * A connection to PostgreSQL: through its Unix socket where `localSocketPath` finds one, else TCP
 * with Nagle's algorithm off (TCP_NODELAY). postgres.js writes the statements of one tick together,
 * but a batch past 1,024 bytes goes out at once and the rest of it a moment later; with Nagle's
 * algorithm the kernel holds that rest until PostgreSQL acknowledges the first part, which it does
 * with its answer, so the batch cost two round trips instead of one (an order's, three more:
 * test/order-round-trips.test.ts).
 */
function connectSocket(o: SocketOptions, socketDir: string): net.Socket {
  const local = o.path || localSocketPath(o.host[0], o.port[0], socketDir);
  if (local) return net.connect(local);
  const socket = net.connect({ host: o.host[0], port: o.port[0] });
  socket.setNoDelay(true);
  return socket;
}

/**
 * The options of `sql.unsafe` for a statement with parameters whose text is fixed (or one of a few
 * fixed variants): prepared, as a tagged query is. Unprepared, postgres.js describes it in a round
 * trip of its own before running it, holds back the statements queued behind it meanwhile, and
 * PostgreSQL plans it anew every time (issue 13).
 */
export const prepared = { prepare: true } as const;

/** Creates the database named in the URL when it does not exist yet (development and tests). */
export async function ensureDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  u.pathname = "/postgres";
  const admin = postgres(u.toString(), { max: 1, onnotice: () => {} });
  try {
    const rows = await admin`select 1 from pg_database where datname = ${name}`;
    if (rows.length === 0) {
      await admin.unsafe(`create database "${name.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
        if (err.code !== "42P04") throw err; // created by a concurrent starter
      });
    }
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/**
 * Applies `NNN_name.sql` files from `dir` in order, each once, under an advisory lock so that
 * several replicas starting together migrate exactly once.
 */
export async function migrate(sql: Sql, schema: string, dir: string, log: Logger): Promise<void> {
  const files = (await readdir(dir)).filter((f) => /^\d+_.*\.sql$/.test(f)).sort();
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`migrate:${schema}`}))`;
    // Only when missing: a service's role owns its schema but may not create schemas (CREATE
    // SCHEMA checks that right even when the schema exists).
    const [{ present }] =
      await tx`select exists (select 1 from pg_namespace where nspname = ${schema}) as present`;
    if (!present) await tx.unsafe(`create schema "${schema}"`);
    await tx.unsafe(
      `create table if not exists "${schema}".schema_migrations (name text primary key, applied_at timestamptz not null default now())`,
    );
    const done = new Set(
      (await tx.unsafe(`select name from "${schema}".schema_migrations`)).map((r) => r.name as string),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const text = await readFile(path.join(dir, file), "utf8");
      await tx.unsafe(`set local search_path to "${schema}"`);
      await tx.unsafe(text);
      await tx.unsafe(`insert into "${schema}".schema_migrations (name) values ($1)`, [file]);
      log.info("migration applied", { schema, file });
    }
  });
}

/**
 * Calls `wake` on every NOTIFY on `channel` (delivered when the notifying transaction commits), on
 * the pool's one listening connection. Where listening fails the loop it wakes still polls, so
 * that is logged, not thrown. `stop` stops listening.
 */
export function wakeOnNotify(
  sql: Sql,
  channel: string,
  wake: () => void,
  log: Logger,
): { stop(): Promise<void> } {
  const listening = sql.listen(channel, wake).catch((err: unknown) => {
    log.warn(`listening on ${channel} failed; polling only`, { err });
    return undefined;
  });
  return { stop: async () => (await listening)?.unlisten() };
}
