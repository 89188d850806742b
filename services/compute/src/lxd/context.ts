import type { JobRow } from "../driver.ts";
import type { MachineRow } from "../machines.ts";
import type { CopyContext, CopyPlace } from "./backups.ts";
import type { LxdClient } from "./client.ts";
import type { LxdDriverConfig } from "./driver-config.ts";
import { instanceName } from "./instance.ts";
import { oneAtATimePerKey } from "./one-at-a-time.ts";
import { createPlacement } from "./placement.ts";
import type { LxdMachineState } from "./state.ts";

/** What the driver's parts share: its configuration, the daemon each machine is on, its placement. */
export function createLxdContext(cfg: LxdDriverConfig) {
  const byName = new Map(cfg.clients.map((c) => [c.endpoint.name, c]));
  const clientOf = (endpoint?: string) => (endpoint && byName.get(endpoint)) || cfg.clients[0];
  const imageOf = (os: string) => cfg.images[os] ?? os;
  const machineState = (m: MachineRow) => m.driver_state as LxdMachineState;

  /** The host port `port` on the proxy address, forwarded to the instance's port 22. */
  const proxyDevice = (port: number) => ({
    type: "proxy",
    listen: `tcp:${cfg.proxyAddress}:${port}`,
    connect: "tcp:127.0.0.1:22",
    bind: "host",
  });

  /** Where a machine's copies are kept: its instance's LXD snapshots and backups, the backup store. */
  const copyPlace = (c: LxdClient, m: MachineRow): CopyPlace => ({
    c,
    url: `/1.0/instances/${instanceName(m.service_id)}`,
    backupDir: cfg.backupDir,
    serviceId: m.service_id,
  });
  const copyContext = (c: LxdClient, job: JobRow, m: MachineRow): CopyContext => ({
    ...copyPlace(c, m),
    job,
  });

  return {
    cfg,
    clientOf,
    imageOf,
    machineState,
    proxyDevice,
    copyPlace,
    copyContext,
    /** Container creations on one daemon, one at a time (build-steps.ts says why). */
    oneCreateAtATime: oneAtATimePerKey(),
    ...createPlacement(cfg),
  };
}

export type LxdContext = ReturnType<typeof createLxdContext>;
