/**
 * Finds PostgreSQL, Redis and NATS: the URLs in the environment (or the local defaults) when they
 * answer; otherwise, where a Docker engine is available, containers started with testcontainers;
 * otherwise a clear message naming what is missing.
 */
import { spawnSync } from "node:child_process";
import net from "node:net";

export interface DepUrls {
  DATABASE_URL: string;
  REDIS_URL: string;
  NATS_URL: string;
}

export function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url.split(",")[0]);
  return new Promise((resolve) => {
    const sock = net.connect({ host: u.hostname, port: Number(u.port || defaultPort), timeout: 2000 });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.once("connect", () => done(true));
    sock.once("error", () => done(false));
    sock.once("timeout", () => done(false));
  });
}

const dockerAvailable = () => spawnSync("docker", ["info"], { stdio: "ignore", timeout: 5000 }).status === 0;

export interface Dependencies {
  urls: DepUrls;
  stop(): Promise<void>;
}

export async function ensureDependencies(wanted: DepUrls): Promise<Dependencies> {
  const checks = [
    { name: "PostgreSQL", key: "DATABASE_URL", port: 5432 },
    { name: "Redis", key: "REDIS_URL", port: 6379 },
    { name: "NATS (JetStream)", key: "NATS_URL", port: 4222 },
  ] as const;
  const urls = { ...wanted };
  const down = [];
  for (const c of checks) if (!(await reachable(urls[c.key], c.port))) down.push(c);
  if (down.length === 0) return { urls, stop: async () => {} };

  if (!dockerAvailable()) {
    const lines = down.map((c) => `  ${c.name} is not reachable at ${urls[c.key]} (set ${c.key})`);
    throw new Error(
      `a required service is down and no Docker engine is available to start it:\n${lines.join("\n")}\n` +
        "Start them (README, 'Requirements') or point the variables at running ones.",
    );
  }
  // Loaded only here: most machines never need it.
  const { GenericContainer, Wait } = await import("testcontainers");
  const started: Array<{ stop(): Promise<unknown> }> = [];
  for (const c of down) {
    if (c.key === "DATABASE_URL") {
      const pg = await new GenericContainer("postgres:16-alpine")
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start();
      started.push(pg);
      const db = new URL(urls.DATABASE_URL).pathname.slice(1) || "hosting";
      urls.DATABASE_URL = `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/${db}`;
    } else if (c.key === "REDIS_URL") {
      const redis = await new GenericContainer("redis:7-alpine").withExposedPorts(6379).start();
      started.push(redis);
      urls.REDIS_URL = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
    } else {
      const nats = await new GenericContainer("nats:2.10-alpine")
        .withCommand(["-js"])
        .withExposedPorts(4222)
        .start();
      started.push(nats);
      urls.NATS_URL = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
    }
    process.stdout.write(`started ${c.name} in a container (testcontainers)\n`);
  }
  return {
    urls,
    stop: async () => {
      await Promise.all(started.map((s) => s.stop()));
    },
  };
}
