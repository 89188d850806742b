import { JobFailure } from "./backups.ts";
import { type LxdClient, LxdError } from "./client.ts";
import type { LxdDriverConfig } from "./driver-config.ts";
import { capacityOf, DEFAULT_HOST_LIMITS, hasFreeDisk, type LxdHost, surveyHosts } from "./hosts.ts";

/** The btrfs pool `npm run lxd:setup` makes (scripts/lxd/setup.sh): root disk sizes hold there. */
export const BTRFS_POOL = "hb-btrfs";

/** How long a capacity reading is reused: a burst of orders asks LXD once. */
const CAPACITY_TTL_MS = 5000;

/** Where new machines go: each endpoint's storage pool, the host with room, what the hosts hold. */
export function createPlacement(cfg: LxdDriverConfig) {
  const hostLimits = cfg.hostLimits ?? DEFAULT_HOST_LIMITS;

  const pools = new Map<string, Promise<string>>();
  /**
   * The pool an endpoint's new root disks go on: the configured one, else BTRFS_POOL where the
   * daemon has it, else `default` (a `dir` pool, where LXD cannot enforce sizes). Asked once per
   * endpoint and process; machines already built keep the pool they were made on (their root
   * device names it).
   */
  function poolOf(c: LxdClient): Promise<string> {
    if (cfg.storagePool) return Promise.resolve(cfg.storagePool);
    let pool = pools.get(c.endpoint.name);
    if (!pool) {
      pool = c.get(`/1.0/storage-pools/${BTRFS_POOL}`).then(
        () => BTRFS_POOL,
        (err: unknown) => {
          if (err instanceof LxdError && err.status === 404) return "default";
          // The daemon did not answer: asked again next time.
          pools.delete(c.endpoint.name);
          throw err;
        },
      );
      pools.set(c.endpoint.name, pool);
    }
    return pool;
  }

  let surveying: Promise<{ hosts: LxdHost[]; failures: unknown[] }> | undefined;
  /**
   * The hosts as they are now. Builds placed at the same moment share one survey: eight orders at
   * once asked LXD for its resources eight times over, on a daemon already busy creating them.
   */
  function survey() {
    surveying ??= (async () => {
      const failures: unknown[] = [];
      try {
        return { hosts: await surveyHosts(cfg.clients, poolOf, failures), failures };
      } finally {
        surveying = undefined;
      }
    })();
    return surveying;
  }

  /**
   * The member with the most free memory, across every configured endpoint (and cluster member),
   * among those whose storage pool has room. When no endpoint answered, the daemon's failure is
   * thrown as it is: a build waits for a daemon that does not answer (advance.ts), as every other
   * step does, rather than failing at once.
   */
  async function place(): Promise<{ endpoint: string; member?: string }> {
    const { hosts: all, failures } = await survey();
    if (all.length === 0 && failures[0] instanceof LxdError) throw failures[0];
    const hosts = all.filter((h) => hasFreeDisk(h, hostLimits));
    hosts.sort((a, b) => b.memoryTotal - b.memoryUsed - (a.memoryTotal - a.memoryUsed));
    if (!hosts[0]) throw new JobFailure("No LXD host is reachable with room to place the machine on");
    return { endpoint: hosts[0].endpoint, member: hosts[0].member };
  }

  let capacityRead: { at: number; value: Promise<ReturnType<typeof capacityOf>> } | undefined;
  /** What the hosts can hold (hosts.ts), read again at most every CAPACITY_TTL_MS. */
  function capacity() {
    if (!capacityRead || Date.now() - capacityRead.at > CAPACITY_TTL_MS) {
      capacityRead = {
        at: Date.now(),
        value: surveyHosts(cfg.clients, poolOf).then((hosts) => capacityOf(hosts, hostLimits)),
      };
    }
    return capacityRead.value;
  }

  return { poolOf, place, capacity };
}
