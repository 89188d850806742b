/**
 * Machines' private networks with the real driver and LXD (issue 30 §4): a machine reaches its
 * sibling, not another customer's machine, nothing of the host but the apt proxy, and installs a
 * package through that proxy. Needs the host prepared by `HB_LXD_NETWORK_SUBNET=198.18.0.0/16 npm run
 * lxd:setup` (the firewall, the hbapt bridge, apt-cacher-ng) and both images; skipped, saying why,
 * where they are missing. Traffic stays between this host and its containers (198.18.0.0/15).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import net from "node:net";
import os from "node:os";
import { after, before, describe, it } from "node:test";
import { reservePorts } from "../../../../scripts/ports.ts";
import { eventually } from "../../../../test/support/eventually.ts";
import type { JobOutcome, JobRow, ProviderDriver } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import { createLxdDriver, instanceName } from "./driver.ts";
import { lxdUnavailable } from "./lxd-available.ts";
import { execOutput, job, lxc, real, settle } from "./lxd-harness.ts";
import { freeAddress, type MachineNetwork, parsePool, proxyAddressOf, subnetAt } from "./network.ts";

const POOL = parsePool("198.18.0.0/16");
const PROXY = proxyAddressOf(POOL);

/** Whether a TCP connection to the address opens from this host within a second. */
const opens = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ host, port, timeout: 1000 }, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
    s.on("timeout", () => {
      s.destroy();
      resolve(false);
    });
  });

async function hostUnprepared(): Promise<string | undefined> {
  const why = await lxdUnavailable(["busybox", "debian-12"]);
  if (why) return why;
  const prepared =
    (await real.get("/1.0/networks/hbapt").then(
      () => true,
      () => false,
    )) && (await opens(PROXY, 3142));
  return prepared
    ? undefined
    : `the host has no machine network (the hbapt bridge and apt-cacher-ng on ${PROXY}:3142): run HB_LXD_NETWORK_SUBNET=198.18.0.0/16 npm run lxd:setup as root`;
}
const unavailable = await hostUnprepared();
if (unavailable) process.stderr.write(`lxd network tests skipped: ${unavailable}\n`);

// Subnets far up the pool, random per run, so a run beside compute's own allocations (which start
// at the bottom) or another run of this file does not share a bridge.
const firstIndex = 100 + Math.floor(Math.random() * 140);
const subnets = new Map<string, ReturnType<typeof subnetAt>>();
const given = new Set<string>();
const made: string[] = [];

/** The customer's subnet (one per customer, made on its first machine) and its next address. */
async function allocate(_job: JobRow, m: MachineRow): Promise<MachineNetwork> {
  let s = subnets.get(m.customer_id);
  if (!s) {
    s = subnetAt(POOL, 24, firstIndex + subnets.size);
    subnets.set(m.customer_id, s);
  }
  const address = freeAddress(s, given) ?? "";
  given.add(address);
  return { bridge: s.bridge, subnet: s.subnet, gateway: s.gateway, address };
}

const driver = createLxdDriver({
  clients: [real],
  images: {},
  proxyAddress: "127.0.0.1",
  storagePool: "default",
  profiles: ["default"],
  backupDir: os.tmpdir(),
  unreachableFailMs: 60_000,
  sshKeysOf: async () => [],
  // Reserved as the test stacks' own ports are (scripts/ports.ts), so neither takes the other's.
  allocatePort: async () => (await reservePorts(1))[0],
  remember: async (job, progress) => {
    job.driver_state = progress;
  },
  network: { aptProxy: `http://${PROXY}:3142`, allocate },
});

async function build(d: ProviderDriver, customer_id: string, os: string) {
  const service_id = randomUUID();
  made.push(instanceName(service_id));
  const m = {
    service_id,
    customer_id,
    kind: "vps",
    provider: "lxd",
    hostname: "net-test",
    state: "creating",
    has_instance: false,
    vcpus: 1,
    memory_mb: 256,
    disk_gb: 2,
    os,
    disabled_controls: [],
    driver_state: {},
    ssh_port: null,
    ssh_password_login: false,
    service_status: "active",
    created_at: new Date(),
  } as unknown as MachineRow; // only the columns the driver reads
  const outcome = await settled(d, m, "build");
  const address = outcome.ok ? outcome.addresses?.[0]?.address : undefined;
  assert.ok(address, "the build reports the machine's address");
  return { m, name: instanceName(service_id), address, outcome };
}

/** Runs a job as the job loop does (lxd-harness.ts), until the driver answers; it must succeed. */
async function settled(d: ProviderDriver, m: MachineRow, action: string): Promise<JobOutcome> {
  const outcome = await settle(d, job(m, action), m, 60_000);
  assert.equal(outcome.ok, true, JSON.stringify(outcome));
  return outcome;
}

/**
 * A shell command's output inside the container, by way of a file on its /dev: Debian's LXD 5.0 can
 * lose a short exec's stdout on a busy host (see driver.test.ts `inside`).
 */
const inside = (name: string, script: string, ...args: string[]) => {
  lxc("exec", name, "--", "sh", "-c", `{ ${script}; } >/dev/.hb-exec-out 2>&1`, "sh", ...args);
  return execOutput(name);
};
/**
 * Of host:port targets, those a TCP connection from inside the container opens to (all tried at
 * once; busybox's nc runs `true` once connected, so an open connection ends at once).
 */
const reachableFrom = (name: string, targets: string[]) =>
  inside(
    name,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell script's own expansions
    'for t in "$@"; do (timeout 5 nc -w 2 "${t%:*}" "${t##*:}" -e true >/dev/null 2>&1 && echo "$t") & done; wait',
    ...targets,
  )
    .split("\n")
    .filter(Boolean)
    .sort();
/** A listener inside the container on port 7000 that answers every connection. */
const listen = (name: string) =>
  lxc("exec", name, "--", "sh", "-c", "setsid nc -ll -p 7000 -e echo hi </dev/null >/dev/null 2>&1 &");

after(() => {
  if (unavailable) return;
  for (const name of made) {
    try {
      execFileSync("lxc", ["delete", "--force", name], { stdio: "ignore" });
    } catch {
      // already gone
    }
  }
  for (const s of subnets.values()) {
    try {
      execFileSync("lxc", ["network", "delete", s.bridge], { stdio: "ignore" });
    } catch {
      // never made, or still in use by a machine that would not go
    }
  }
});

describe("lxd machine networks", { skip: unavailable }, () => {
  const [alice, bob] = [randomUUID(), randomUUID()];
  let a1: Awaited<ReturnType<typeof build>>;
  let a2: Awaited<ReturnType<typeof build>>;
  let b1: Awaited<ReturnType<typeof build>>;

  before(async () => {
    if (unavailable) return;
    // Alice's first machine makes her bridge; her second and Bob's machine come after, in parallel.
    a1 = await build(driver, alice, "busybox");
    [a2, b1] = await Promise.all([build(driver, alice, "busybox"), build(driver, bob, "busybox")]);
    listen(a2.name);
    listen(b1.name);
  });

  it("gives each machine a card on its customer's bridge, with the address the build reports", async () => {
    const [sa, sb] = [subnets.get(alice), subnets.get(bob)];
    assert.ok(sa && sb && sa.bridge !== sb.bridge, "one bridge per customer");
    assert.deepEqual(a1.outcome.ok && a1.outcome.addresses, [
      { address: a1.address, version: 4, prefix_length: 24, purpose: "primary" },
    ]);
    const devices = JSON.parse(lxc("query", `/1.0/instances/${a2.name}`)).devices;
    assert.equal(devices.eth0.parent, sa.bridge);
    assert.ok(devices.ssh, "the SSH proxy on loopback is kept");
    await eventually(async () => inside(a2.name, "ip -4 addr show eth0").includes(`inet ${a2.address}/24`));
  });

  it("lets a machine reach its sibling", async () => {
    await eventually(async () => reachableFrom(a1.name, [`${a2.address}:7000`]).length === 1, 15_000, 200);
  });

  it("keeps another customer's machine out of reach", async () => {
    await eventually(async () => reachableFrom(b1.name, [`${b1.address}:7000`]).length === 1, 15_000, 200);
    assert.deepEqual(reachableFrom(a1.name, [`${b1.address}:7000`]), []);
    assert.deepEqual(reachableFrom(b1.name, [`${a2.address}:7000`]), []);
  });

  it("keeps a machine's card and address through a reinstall", async () => {
    const row = {
      ...a2.m,
      state: "running",
      has_instance: true,
      driver_state: (a2.outcome.ok && a2.outcome.driverState) || {},
    };
    const outcome = await settled(driver, row, "reinstall");
    assert.deepEqual(outcome.ok && outcome.addresses, a2.outcome.ok && a2.outcome.addresses);
    listen(a2.name);
    await eventually(async () => reachableFrom(a1.name, [`${a2.address}:7000`]).length === 1, 15_000, 200);
  });

  it("blocks the host's services, on every host address, except the apt proxy", async () => {
    // A host service bound to every address (as the platform's own may be): reachable from the
    // host itself, never from a machine.
    const server = net.createServer((s) => {
      s.on("error", () => {}); // a probe that gives up resets its connection
      s.end("host\n");
    });
    await new Promise<void>((r) => server.listen(0, "0.0.0.0", r));
    const own = (server.address() as net.AddressInfo).port;
    try {
      const hostAddresses = Object.entries(os.networkInterfaces())
        .flatMap(([, list]) => list ?? [])
        .filter((i) => i.family === "IPv4" && !i.internal)
        .map((i) => i.address);
      assert.ok(
        hostAddresses.includes(subnets.get(alice)?.gateway ?? ""),
        "the bridge's address is the host's",
      );
      assert.equal(
        await opens(subnets.get(alice)?.gateway ?? "", own),
        true,
        "the host reaches its own listener",
      );
      const ports = [own, 5432, 6379, 4222, 50051, 50052, 50053, 50054, 3000, 8080, 8443, 22];
      const targets = hostAddresses.flatMap((h) => ports.map((p) => `${h}:${p}`));
      // No host service is ever reachable; the proxy is, once its probe got through (one probe came
      // back empty in CI under load, the proxy's own test passing just after: retried, so an empty
      // answer can never pass as "blocked").
      const hostReached = new Set<string>();
      await eventually(
        async () => {
          const reached = reachableFrom(a1.name, [...targets, `${PROXY}:3142`]);
          for (const t of reached) if (t !== `${PROXY}:3142`) hostReached.add(t);
          return hostReached.size > 0 || reached.includes(`${PROXY}:3142`);
        },
        30_000,
        500,
      );
      assert.deepEqual([...hostReached], [], "a host service answered the machine");
    } finally {
      server.close();
    }
  });

  it("installs a package through the host's apt proxy", { timeout: 240_000 }, async () => {
    const d1 = await build(driver, alice, "debian-12");
    assert.match(inside(d1.name, "cat /etc/apt/apt.conf.d/01hb-proxy"), new RegExp(`http://${PROXY}:3142`));
    // Debian has ifupdown bring eth0 up at boot (networking.service).
    await eventually(
      async () => inside(d1.name, "ip -4 addr show eth0").includes(`inet ${d1.address}/24`),
      30_000,
      200,
    );
    inside(
      d1.name,
      "timeout 150 apt-get -q update && timeout 60 apt-get -q install -y --no-install-recommends hello",
    );
    assert.equal(inside(d1.name, "hello"), "Hello, world!");
  });
});
