/**
 * Private Redis and PostgreSQL servers started from the machine's own binaries on free ports, so a
 * fault test can kill and restart them without touching the services every other test shares.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "../../scripts/stack.ts";
import { eventually } from "./eventually.ts";

const execFileAsync = promisify(execFile);

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

export interface PrivateServer {
  url: string;
  start(): Promise<void>;
  /** Whether the server accepts connections now. */
  isUp(): Promise<boolean>;
  /** The server vanishes mid-flight, as in a crash. */
  kill(): Promise<void>;
  close(): Promise<void>;
}

export async function privateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const server: PrivateServer = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        {
          stdio: "ignore",
        },
      );
      await eventually(() => portOpen(port), 10_000, 50);
    },
    isUp: () => portOpen(port),
    async kill() {
      const p = proc;
      proc = undefined;
      if (!p || p.exitCode !== null) return;
      const exited = new Promise((r) => p.once("exit", r));
      p.kill("SIGKILL");
      await exited;
    },
    close: () => server.kill(),
  };
  await server.start();
  return server;
}

const PG_BIN = () => {
  const versions = execFileSync("ls", ["/usr/lib/postgresql"]).toString().trim().split("\n");
  return `/usr/lib/postgresql/${versions.sort().at(-1)}/bin`;
};

/** PostgreSQL refuses to run as root: when the tests run as root, its binaries run as postgres. */
function postgresUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  return {
    uid: Number(execFileSync("id", ["-u", "postgres"]).toString()),
    gid: Number(execFileSync("id", ["-g", "postgres"]).toString()),
  };
}

export async function privatePostgres(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "hb-pg-"));
  const user = postgresUser();
  if (user.uid !== undefined && user.gid !== undefined) chownSync(dir, user.uid, user.gid);
  const bin = PG_BIN();
  execFileSync(`${bin}/initdb`, ["-D", dir, "-A", "trust", "-U", "postgres", "--no-sync"], {
    stdio: "ignore",
    ...user,
  });
  let proc: ChildProcess | undefined;
  const server: PrivateServer = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      proc = spawn(
        `${bin}/postgres`,
        [
          "-D",
          dir,
          "-p",
          String(port),
          "-c",
          "listen_addresses=127.0.0.1",
          "-c",
          `unix_socket_directories=${dir}`,
          "-c",
          "fsync=off",
        ],
        { stdio: "ignore", ...user },
      );
      // An open port is not yet a server: until recovery ends it refuses every session with
      // "the database system is starting up". pg_isready answers 0 once sessions are accepted.
      await eventually(
        async () =>
          (await portOpen(port)) &&
          (await execFileAsync(`${bin}/pg_isready`, ["-q", "-h", "127.0.0.1", "-p", String(port)]).then(
            () => true,
            () => false,
          )),
        30_000,
        50,
      );
    },
    isUp: () => portOpen(port),
    async kill() {
      const p = proc;
      proc = undefined;
      if (!p || p.exitCode !== null) return;
      const exited = new Promise((r) => p.once("exit", r));
      // SIGQUIT is PostgreSQL's immediate shutdown: every backend exits at once without a
      // checkpoint, as in a crash, and none is left holding shared memory for the restart.
      p.kill("SIGQUIT");
      await exited;
      await eventually(async () => !(await portOpen(port)), 10_000, 50);
    },
    async close() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** A NATS server with JetStream whose store survives a restart, as the machine's does. */
export async function privateNats(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "hb-nats-"));
  let proc: ChildProcess | undefined;
  const server: PrivateServer = {
    url: `nats://127.0.0.1:${port}`,
    async start() {
      proc = spawn("/usr/sbin/nats-server", ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir], {
        stdio: "ignore",
      });
      await eventually(() => portOpen(port), 10_000, 50);
    },
    isUp: () => portOpen(port),
    async kill() {
      const p = proc;
      proc = undefined;
      if (!p || p.exitCode !== null) return;
      const exited = new Promise((r) => p.once("exit", r));
      p.kill("SIGKILL");
      await exited;
    },
    async close() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
