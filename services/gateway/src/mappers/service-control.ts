import type { GameServer, MachineActions } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { z } from "zod";
import type { gameDetail, serviceActions } from "../wire/service-control.ts";
import { instanceStates, machineKinds } from "./compute-wire.ts";
import { capabilitiesJson } from "./machine.ts";

/** GET /services/{id}/actions. */
export function serviceActionsJson(a: MachineActions): z.infer<typeof serviceActions> {
  return {
    backend: a.provider,
    kind: machineKinds.name(a.kind),
    actions: a.actions,
    capabilities: capabilitiesJson(a.capabilities),
  };
}

/** GET /services/{id}/game: players connect to host:port. */
export function gameDetailJson(g: GameServer): z.infer<typeof gameDetail> {
  return {
    state: instanceStates.name(g.state),
    game: g.game,
    players: { online: g.playersOnline, max: g.playersMax },
    address: `${g.host}:${g.port}`,
  };
}
