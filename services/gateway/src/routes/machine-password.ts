import { MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { passwordResultJson } from "../mappers/machine-action.ts";
import { route } from "../route.ts";
import { password, sshPasswordLogin } from "../schemas.ts";
import { examples as actionEx, passwordResult } from "../wire/machine-action.ts";
import { id, manage } from "./machine-common.ts";

/** Root password reset: the same rules on the VPS and the generic service routes. */
export function passwordRoute(path: string, tag: string, kind: MachineKind, summary: string) {
  return route({
    method: "post",
    path,
    tag,
    summary,
    auth: { scope: "services", permissions: [...manage] },
    params: id,
    body: z.object({ password, ssh_password_login: sshPasswordLogin.optional() }),
    response: passwordResult,
    example: actionEx.password,
    // A generic service may be a dedicated server, whose rebuild the controller can refuse.
    errors:
      kind === MachineKind.VPS
        ? ["CONFLICT", "ACTION_NOT_ALLOWED"]
        : ["CONFLICT", "ACTION_NOT_ALLOWED", "PROVIDER_ERROR"],
    cooldown: cooldowns.password,
    handler: async ({ clients, caller, params, body }) => ({
      data: passwordResultJson(
        await clients.compute.resetPassword({
          caller,
          serviceId: params.id,
          kind,
          password: body.password,
          sshPasswordLogin: body.ssh_password_login,
        }),
      ),
    }),
  });
}
