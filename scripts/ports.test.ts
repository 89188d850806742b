import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, it } from "node:test";
import { portPool, reservePorts } from "./ports.ts";

const range = (low: number, count: number) => Array.from({ length: count }, (_, i) => low + i);
const sorted = (ports: number[]) => [...ports].sort((a, b) => a - b);

/** Another process that reserves `n` ports and holds them until its stdin closes. */
async function otherProcess(pool: string, n: number) {
  const modulePath = path.join(import.meta.dirname, "ports.ts");
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const { reservePorts } = await import(${JSON.stringify(modulePath)});
       console.log(JSON.stringify(await reservePorts(${n})));
       process.stdin.resume(); process.stdin.on("end", () => process.exit(0));`,
    ],
    { env: { ...process.env, HB_PORT_POOL: pool }, stdio: ["pipe", "pipe", "inherit"] },
  );
  const ports = await new Promise<number[]>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(JSON.parse(out) as number[]);
    });
    child.once("exit", (code) => reject(new Error(`reserving process exited with ${code}`)));
  });
  const exit = () =>
    new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.stdin.end();
    });
  return { ports, exit };
}

describe("port reservations", () => {
  afterEach(() => {
    delete process.env.HB_PORT_POOL;
  });

  it("takes the pool from just below the kernel's ephemeral range", () => {
    const { low, high } = portPool();
    assert.ok(high <= 32_768, `pool ends at ${high}`);
    assert.ok(high - low >= 10_000);
  });

  it("never hands out a port another live process holds, and takes it over once that process has exited", async () => {
    const pool = range(15_100, 30);
    process.env.HB_PORT_POOL = `${pool[0]}-${pool.at(-1)}`;
    const other = await otherProcess(process.env.HB_PORT_POOL, 20);
    assert.equal(new Set(other.ports).size, 20);

    const mine = await reservePorts(10);
    assert.deepEqual(sorted(mine), sorted(pool.filter((p) => !other.ports.includes(p))));
    await assert.rejects(reservePorts(1), /no free port left/);

    await other.exit();
    const takenOver = await reservePorts(20);
    assert.deepEqual(sorted(takenOver), sorted(other.ports));
  });

  it("skips a port something already listens on", async () => {
    const pool = range(15_200, 3);
    process.env.HB_PORT_POOL = `${pool[0]}-${pool.at(-1)}`;
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(pool[1], "127.0.0.1", resolve));
    try {
      assert.deepEqual(sorted(await reservePorts(2)), [pool[0], pool[2]]);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});
