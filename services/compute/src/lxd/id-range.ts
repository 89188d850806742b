import type { LxdClient, LxdInstance } from "./client.ts";

/**
 * Whether another instance on the daemon was given the same host id range as `name`
 * (volatile.idmap.base). LXD 5.0 picks an isolated container's range when it creates it, from the
 * ranges its stored instances hold, so creations that overlap can be handed the same range (seen:
 * ten at once, two pairs sharing one; docs/providers.md). Creations are made one at a time per
 * daemon in a compute process; this catches the overlap of two compute replicas or another client.
 */
export async function idRangeShared(c: LxdClient, name: string): Promise<boolean> {
  const all = await c.get<LxdInstance[]>("/1.0/instances?recursion=1");
  const base = all.find((i) => i.name === name)?.config["volatile.idmap.base"];
  if (!base) return false;
  return all.some((i) => i.name !== name && i.config["volatile.idmap.base"] === base);
}
