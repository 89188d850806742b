/**
 * Ports for private stacks and servers that no other process on the machine will take before the
 * process meant for them binds it.
 *
 * Asking the kernel for port 0 and closing it again (the usual trick) leaves a window: between the
 * close and the service's own bind, the kernel may hand that port to anyone, and it does: every
 * outgoing connection takes an ephemeral port from the same range, and concurrent test files ask
 * for hundreds. So ports are taken from just below the ephemeral range, where the kernel never
 * hands one out, and each is reserved by an exclusive file naming the reserving process, which
 * other test processes respect until that process has exited.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const dir = path.join(os.tmpdir(), "hb-ports");
const POOL_SIZE = 12_000;

/**
 * The pool: the POOL_SIZE ports just below the kernel's ephemeral range, or HB_PORT_POOL
 * ("low-high", inclusive) where a machine needs another.
 */
export function portPool(rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"): {
  low: number;
  high: number;
} {
  const given = /^(\d+)-(\d+)$/.exec(process.env.HB_PORT_POOL ?? "");
  if (given) return { low: Number(given[1]), high: Number(given[2]) + 1 };
  let ephemeralLow = 32_768;
  try {
    const first = Number(readFileSync(rangeFile, "utf8").trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > 2048) ephemeralLow = first;
  } catch {
    // not Linux: the IANA ephemeral range starts at 49152, Linux's default at 32768; use the lower.
  }
  const high = ephemeralLow; // exclusive
  return { low: Math.max(1024, high - POOL_SIZE), high };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

const mine = new Set<string>();
let cleanupRegistered = false;

/** Claims the reservation file of `port`, taking over one whose process has exited. */
function claim(port: number): boolean {
  const file = path.join(dir, String(port));
  for (let tries = 0; tries < 2; tries++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      mine.add(file);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = Number(readFileSync(file, "utf8") || "0");
      // An empty file is one being written this instant: someone else's.
      if (!owner || alive(owner)) return false;
      try {
        unlinkSync(file);
      } catch {
        // another process took over the stale reservation first
      }
    }
  }
  return false;
}

function release(file: string) {
  mine.delete(file);
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** Whether nothing listens on `port` (on any address) right now. */
const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen(port, "0.0.0.0", () => srv.close(() => resolve(true)));
  });

/**
 * `n` distinct ports, reserved for the life of this process: each is outside the kernel's
 * ephemeral range, reserved by no other live process, and free to bind right now.
 */
export async function reservePorts(n: number): Promise<number[]> {
  mkdirSync(dir, { recursive: true });
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    process.once("exit", () => {
      for (const file of [...mine]) release(file);
    });
  }
  const { low, high } = portPool();
  const ports: number[] = [];
  for (let tries = 0; ports.length < n; tries++) {
    if (tries > n * 50 + 500) throw new Error(`no free port left in ${low}-${high - 1} (${dir})`);
    const port = low + Math.floor(Math.random() * (high - low));
    if (ports.includes(port) || !claim(port)) continue;
    if (await bindable(port)) ports.push(port);
    else release(path.join(dir, String(port)));
  }
  return ports;
}
