/** Power actions by machine kind, and the state each one leads to. */
export const POWER: Record<string, Record<string, string>> = {
  vps: {
    start: "running",
    stop: "stopped",
    shutdown: "stopped",
    reboot: "running",
    restart: "running",
    poweroff: "stopped",
  },
  dedicated: { on: "running", off: "stopped", restart: "running" },
  game: { start: "running", stop: "stopped", restart: "running", kill: "stopped" },
};

/** What the generic dispatcher accepts; anything else the provider does not expose. */
export const DISPATCH = ["start", "stop", "restart", "status", "stats"];

/** The dispatcher's start and stop are a dedicated server's on and off. */
const DEDICATED_ALIASES: Record<string, string> = { start: "on", stop: "off" };

/** The power actions a machine of this kind takes (a kind without its own table takes the VPS's). */
export const powerTable = (kind: string) => POWER[kind] ?? POWER.vps;

/** Every action name a machine of this kind accepts: the dispatcher's, then its power actions. */
export const actionNames = (kind: string) => [...new Set([...DISPATCH, ...Object.keys(POWER[kind] ?? {})])];

/** The power action a dispatched start, stop or restart is on a machine of this kind. */
export const dispatchedPowerAction = (kind: string, action: string) =>
  kind === "dedicated" ? (DEDICATED_ALIASES[action] ?? action) : action;
