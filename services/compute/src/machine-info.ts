import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type MachineStats, MachineStatsSchema, PowerState } from "@hb/contracts/hb/compute/v1/machines_pb";
import { apiError, type Sql } from "@hb/platform";
import { type ComputeDeps, callerId, driverOf, type Handlers } from "./context.ts";
import type { Drivers } from "./driver.ts";
import { instanceStates, kindFilter, machineKinds } from "./enums.ts";
import { createJobRecords } from "./job-records.ts";
import {
  capabilitiesMessage,
  hasInstance,
  ipAddressesOf,
  ipsOf,
  type MachineRow,
  ownMachine,
} from "./machines.ts";
import { actionNames } from "./power.ts";
import { usageHistory } from "./usage-history.ts";

/** The port players connect to on a game server. */
const GAME_PORT = 25565;

/** Live figures of a machine's instance; NOT_FOUND while it has none. */
export async function statsOf(drivers: Drivers, m: MachineRow): Promise<MachineStats> {
  if (!hasInstance(m)) throw apiError("NOT_FOUND", "The machine does not exist or its build failed");
  const s = await driverOf(drivers, m).stats(m);
  return create(MachineStatsSchema, {
    state: instanceStates.of(m.state),
    vcpus: s.cpu.vcpus,
    cpuUsagePercent: s.cpu.usage_percent,
    memoryTotalMb: s.memory.total_mb,
    memoryUsedMb: s.memory.used_mb,
    diskTotalGb: s.disk.total_gb,
    diskUsedGb: s.disk.used_gb,
    network: { rxBytes: BigInt(s.network.rx_bytes), txBytes: BigInt(s.network.tx_bytes) },
  });
}

/** Reads about one machine: addresses, figures, images, actions, power, provisioning, traffic, game. */
export function createMachineInfo(sql: Sql, { drivers }: ComputeDeps): Handlers {
  const jobRecords = createJobRecords(sql);
  const machineOf = (req: { caller?: { customerId: string }; serviceId: string; kind?: number }) =>
    ownMachine(sql, callerId(req.caller), req.serviceId, kindFilter(req.kind ?? 0));

  return {
    async listIpAddresses(req) {
      const m = await machineOf(req);
      return { ipAddresses: ipAddressesOf(await ipsOf(sql, m.service_id)) };
    },

    async getMachineStats(req) {
      const m = await machineOf(req);
      const [stats, history] = await Promise.all([
        statsOf(drivers, m),
        req.range ? usageHistory(sql, m.service_id, req.range) : undefined,
      ]);
      return { stats, history };
    },

    async listOsImages(req) {
      const m = await machineOf(req);
      return { images: m.os_images.map((id) => ({ id, name: id })) };
    },

    async listMachineActions(req) {
      const m = await machineOf(req);
      return {
        actions: {
          provider: m.provider,
          kind: machineKinds.of(m.kind),
          actions: hasInstance(m) ? actionNames(m.kind) : [],
          capabilities: capabilitiesMessage(m),
        },
      };
    },

    async getPowerStatus(req) {
      const m = await machineOf(req);
      return {
        status: {
          state: hasInstance(m) ? instanceStates.of(m.state) : undefined,
          power: m.state === "running" ? PowerState.ON : PowerState.OFF,
        },
      };
    },

    async getProvisionStatus(req) {
      const m = await machineOf(req);
      return { state: instanceStates.of(m.state), job: await jobRecords.latestBuild(m.service_id) };
    },

    async getTraffic(req) {
      const m = await machineOf(req);
      const { network } = await driverOf(drivers, m).stats(m);
      const now = new Date();
      return {
        traffic: {
          periodStart: timestampFromDate(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))),
          network: { rxBytes: BigInt(network.rx_bytes), txBytes: BigInt(network.tx_bytes) },
        },
      };
    },

    async getGameServer(req) {
      const m = await machineOf(req);
      if (m.kind !== "game") throw apiError("BAD_REQUEST", "This is not a game service");
      const [detail, ips] = await Promise.all([driverOf(drivers, m).game(m), ipsOf(sql, m.service_id)]);
      return {
        gameServer: {
          state: instanceStates.of(m.state),
          game: detail.game,
          playersOnline: detail.players.online,
          playersMax: detail.players.max,
          host: ips[0]?.address ?? "",
          port: GAME_PORT,
        },
      };
    },
  };
}
