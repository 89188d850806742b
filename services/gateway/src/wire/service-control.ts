import { z } from "zod";
import { capabilities, INSTANCE_STATES, examples as machineExamples } from "./machine.ts";

/** GET /services/{id}/actions: what the service accepts and which backend it is on. */
export const serviceActions = z.object({
  backend: z.string().describe("The provider the service runs on"),
  kind: z.string().describe("vps, dedicated, game, ..."),
  actions: z.array(z.string()).describe("Empty while the machine does not exist"),
  capabilities,
});

/** GET /services/{id}/game. */
export const gameDetail = z.object({
  state: z.enum(INSTANCE_STATES),
  game: z.string(),
  players: z.object({ online: z.int().min(0), max: z.int().min(0) }),
  address: z.string().describe("host:port players connect to"),
});

export const examples = {
  serviceActions: {
    backend: "simulator",
    kind: "vps",
    actions: ["start", "stop", "restart", "status", "stats", "shutdown", "reboot", "poweroff"],
    capabilities: machineExamples.capabilities,
  },
  gameDetail: {
    state: "running" as const,
    game: "minecraft",
    players: { online: 3, max: 20 },
    address: "203.0.113.17:25565",
  },
};
