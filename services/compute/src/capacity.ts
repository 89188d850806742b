import { apiError, type TxSql } from "@hb/platform";
import type { Drivers, HostCapacity } from "./driver.ts";

/** A machine about to be created, as the capacity rule weighs it. */
export interface PlacementRequest {
  serviceId: string;
  provider: string;
  memoryMb: number;
  diskGb: number;
}

/**
 * What each provider's hosts can hold, asked of its driver before the accepting transaction opens
 * (a driver is never called inside one). A driver that does not answer holds every order for it.
 */
export async function hostCapacities(
  drivers: Drivers,
  providers: string[],
): Promise<Map<string, HostCapacity>> {
  const found = new Map<string, HostCapacity>();
  await Promise.all(
    [...new Set(providers)].map(async (p) => {
      const driver = drivers[p];
      if (!driver?.capacity) return;
      try {
        found.set(p, await driver.capacity());
      } catch {
        found.set(p, { memoryMb: 0, diskGb: 0, full: "the provider's hosts did not answer" });
      }
    }),
  );
  return found;
}

/**
 * The capacity rule: which of these machines their provider cannot take, with the reason. Counted
 * against what the provider's machines already hold (every machine with an instance or being
 * built: a failed or terminated one holds nothing): at most `maxMachines` machines (0: no
 * maximum), and the plans' memory and disk within what the hosts can hold (`weigh`). A machine
 * already recorded is not weighed again. Serialised across callers (replicas included) by a
 * transaction-scoped lock, so two batches cannot both take the last place.
 */
export async function capacityRefusals(
  tx: TxSql,
  reqs: PlacementRequest[],
  hosts: Map<string, HostCapacity>,
  maxMachines: number,
): Promise<Map<string, string>> {
  const providers = [...new Set(reqs.map((r) => r.provider))].filter((p) => maxMachines > 0 || hosts.has(p));
  if (providers.length === 0) return new Map();
  await tx`select pg_advisory_xact_lock(hashtext('compute-capacity'))`;
  // Only machines not recorded yet are weighed (a repeated call for a service changes nothing).
  const known = new Set(
    (
      await tx<{ service_id: string }[]>`
        select service_id from machines where service_id = any(${reqs.map((r) => r.serviceId)}::uuid[])`
    ).map((r) => r.service_id),
  );
  // The totals a trigger keeps (migration 016): one row per provider, however many machines.
  const held = await tx<{ provider: string; machines: number; memory_mb: number; disk_gb: number }[]>`
    select provider, machines, memory_mb::float8 as memory_mb, disk_gb::float8 as disk_gb
    from capacity_held where provider = any(${providers}::text[])`;
  return weigh(
    new Map(
      held.map((h) => [h.provider, { machines: h.machines, memoryMb: h.memory_mb, diskGb: h.disk_gb }]),
    ),
    reqs.filter((r) => providers.includes(r.provider) && !known.has(r.serviceId)),
    hosts,
    maxMachines,
  );
}

/** What a provider's machines hold: how many, and their plans' memory and disk. */
export interface Held {
  machines: number;
  memoryMb: number;
  diskGb: number;
}

/**
 * The rule itself, on figures: requests weighed in order against what is held, each one taken
 * counting against the next; answers the refused ones with the reason.
 */
export function weigh(
  held: Map<string, Held>,
  reqs: PlacementRequest[],
  hosts: Map<string, HostCapacity>,
  maxMachines: number,
): Map<string, string> {
  const refused = new Map<string, string>();
  const use = new Map([...held].map(([p, h]) => [p, { ...h }]));
  for (const r of reqs) {
    const u = use.get(r.provider) ?? { machines: 0, memoryMb: 0, diskGb: 0 };
    const host = hosts.get(r.provider);
    const reason =
      maxMachines > 0 && u.machines + 1 > maxMachines
        ? `it holds ${u.machines} of at most ${maxMachines} machines`
        : host?.full
          ? host.full
          : host && u.memoryMb + r.memoryMb > host.memoryMb
            ? `${r.memoryMb} MB of memory is asked and ${Math.max(0, host.memoryMb - u.memoryMb)} MB of ${host.memoryMb} MB is free`
            : host && u.diskGb + r.diskGb > host.diskGb
              ? `${r.diskGb} GB of disk is asked and ${Math.max(0, host.diskGb - u.diskGb)} GB of ${host.diskGb} GB is free`
              : undefined;
    if (reason) {
      refused.set(r.serviceId, `No capacity for the machine on ${r.provider} now: ${reason}`);
      continue;
    }
    use.set(r.provider, {
      machines: u.machines + 1,
      memoryMb: u.memoryMb + r.memoryMb,
      diskGb: u.diskGb + r.diskGb,
    });
  }
  return refused;
}

/** The error a held order's provisioning call answers: billing keeps the service pending and asks again. */
export const noCapacity = (reason: string) => apiError("CONFLICT", reason);
