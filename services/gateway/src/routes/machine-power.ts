import type { MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { powerActions } from "../mappers/compute-wire.ts";
import { powerResultJson } from "../mappers/machine-action.ts";
import type { Context } from "../route.ts";

/**
 * A power action by its wire name. A name the enum does not have goes as UNSPECIFIED: compute
 * refuses it with the actions the machine's kind takes, which only compute knows.
 */
export const runPower =
  (kind: MachineKind, action: (ctx: Context<{ id: string; action?: string }, unknown, unknown>) => string) =>
  async (ctx: Context<{ id: string; action?: string }, unknown, unknown>) => {
    const { result } = await ctx.clients.compute.runPowerAction({
      caller: ctx.caller,
      serviceId: ctx.params.id,
      kind,
      action: powerActions.parse(action(ctx)),
    });
    return { data: powerResultJson(result) };
  };
