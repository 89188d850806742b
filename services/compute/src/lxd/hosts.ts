import type { HostCapacity } from "../driver.ts";
import type { LxdClient, LxdResources } from "./client.ts";

/** How much of a host's memory and disk machines' plans may take (docs/providers.md). */
export interface HostLimits {
  /** Memory kept for the host itself (LXD, lxcfs, the platform's services), MB. */
  reserveMb: number;
  /** Plans' memory may add up to the host's (less the reserve) times this. */
  memoryOvercommit: number;
  /** Plans' root disks may add up to the storage pool's size times this. */
  diskOvercommit: number;
  /** A host whose pool has less free space than this (GB) takes no new machine. */
  diskReserveGb: number;
}

export const DEFAULT_HOST_LIMITS: HostLimits = {
  reserveMb: 1024,
  memoryOvercommit: 1,
  diskOvercommit: 1,
  diskReserveGb: 5,
};

/** One daemon, or one member of a cluster, as placement and the capacity rule see it. */
export interface LxdHost {
  endpoint: string;
  /** the cluster member, when the endpoint is a cluster */
  member?: string;
  memoryTotal: number;
  memoryUsed: number;
  /** the storage pool's size and use, where LXD reports them */
  poolTotal?: number;
  poolUsed?: number;
}

interface PoolResources {
  space?: { total: number; used: number };
}

/**
 * Every reachable host of the configured endpoints, with its memory and the space of the storage
 * pool new machines go on there
 * (`GET /1.0/resources`, `GET /1.0/storage-pools/{pool}/resources`; `?target=` per cluster member).
 * An endpoint that does not answer is left out: it takes no new machines; what it failed with is
 * added to `failures` when given.
 */
export async function surveyHosts(
  clients: LxdClient[],
  poolOf: (c: LxdClient) => Promise<string>,
  failures?: unknown[],
): Promise<LxdHost[]> {
  const hosts: LxdHost[] = [];
  const measure = async (c: LxdClient, member?: string): Promise<LxdHost> => {
    const target = member ? `?target=${encodeURIComponent(member)}` : "";
    const poolPath = `/1.0/storage-pools/${encodeURIComponent(await poolOf(c))}/resources`;
    const [r, p] = await Promise.all([
      c.get<LxdResources>(`/1.0/resources${target}`),
      // A pool LXD cannot size (a remote one) does not keep the host from taking machines.
      c.get<PoolResources>(`${poolPath}${target}`).catch(() => undefined),
    ]);
    return {
      endpoint: c.endpoint.name,
      member,
      memoryTotal: r.memory.total,
      memoryUsed: r.memory.used,
      poolTotal: p?.space?.total,
      poolUsed: p?.space?.used,
    };
  };
  await Promise.all(
    clients.map(async (c) => {
      try {
        const server = await c.get<{ environment: { server_clustered: boolean } }>("/1.0");
        if (!server.environment.server_clustered) {
          hosts.push(await measure(c));
          return;
        }
        const members = await c.get<{ server_name: string; status: string }[]>(
          "/1.0/cluster/members?recursion=1",
        );
        for (const member of members.filter((x) => x.status === "Online"))
          hosts.push(await measure(c, member.server_name));
      } catch (err) {
        // An endpoint that does not answer takes no new machines; the others may.
        failures?.push(err);
      }
    }),
  );
  return hosts;
}

const GIB = 2 ** 30;
const MIB = 2 ** 20;

/** Whether a host's pool has room for a new machine's files (unknown counts as room). */
export const hasFreeDisk = (h: LxdHost, limits: HostLimits) =>
  h.poolTotal === undefined ||
  h.poolUsed === undefined ||
  (h.poolTotal - h.poolUsed) / GIB >= limits.diskReserveGb;

/**
 * What the hosts can hold for machines' plans: memory (less the host's reserve, times the
 * overcommit), the pools' size (times the overcommit), and why nothing fits now when no host is
 * reachable or every pool is short of free space.
 */
export function capacityOf(hosts: LxdHost[], limits: HostLimits): HostCapacity {
  if (hosts.length === 0) return { memoryMb: 0, diskGb: 0, full: "no LXD host answers" };
  const open = hosts.filter((h) => hasFreeDisk(h, limits));
  let memoryMb = 0;
  let diskGb = 0;
  let unsized = false;
  for (const h of open) {
    memoryMb += Math.max(0, h.memoryTotal / MIB - limits.reserveMb) * limits.memoryOvercommit;
    if (h.poolTotal === undefined) unsized = true;
    else diskGb += (h.poolTotal / GIB) * limits.diskOvercommit;
  }
  return {
    memoryMb: Math.floor(memoryMb),
    // A pool LXD does not size sets no disk bound.
    diskGb: unsized ? Number.POSITIVE_INFINITY : Math.floor(diskGb),
    ...(open.length === 0
      ? { full: `every LXD host's storage pool has less than ${limits.diskReserveGb} GB free` }
      : {}),
  };
}
