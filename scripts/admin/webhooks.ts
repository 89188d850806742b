import { AuthService } from "@hb/contracts/auth/v1/auth_pb";
import { WebhooksService } from "@hb/contracts/webhooks/v1/webhooks_pb";
import { type CommandGroup, client, int, need, opt } from "./common.ts";

const auth = () => client(AuthService, "AUTH_ADDR", "127.0.0.1:50051");
const webhooks = () => client(WebhooksService, "WEBHOOKS_ADDR", "127.0.0.1:50054");

export const webhookCommands: CommandGroup = {
  usage: [
    "partner create --customer ID [--status pending|active|suspended]   (prints the signing secret once)",
    "partner activate|suspend|pending <customerId>",
    "partner rotate-secret <customerId> [--clear]   (prints the new secret once; the old one stops at once)",
    "partner set-url <customerId> --url URL   (empty --url '' clears it)",
    "partner deliveries <customerId> [--limit N]",
    "webhooks settings get",
    "webhooks settings set [--max-attempts 1-10] [--base-delay 10-3600]",
    "webhooks pass   (run a delivery pass now)",
  ],
  commands: {
    "partner create": (_p, f) =>
      auth().createPartner({ customerId: need(f, "customer"), status: opt(f, "status") ?? "pending" }),
    "partner activate": ([id]) => auth().setPartnerStatus({ customerId: id ?? "", status: "active" }),
    "partner suspend": ([id]) => auth().setPartnerStatus({ customerId: id ?? "", status: "suspended" }),
    "partner pending": ([id]) => auth().setPartnerStatus({ customerId: id ?? "", status: "pending" }),
    "partner rotate-secret": ([id], f) =>
      auth().rotatePartnerSecret({ customerId: id ?? "", clear: f.clear === true }),
    "partner set-url": ([id], f) =>
      webhooks().setWebhookUrl({ partnerId: id ?? "", url: typeof f.url === "string" ? f.url : "" }),
    "partner deliveries": ([id], f) =>
      webhooks().listDeliveries({ partnerId: id ?? "", limit: int(opt(f, "limit"), "limit") ?? 100 }),
    "webhooks settings": async ([action], f) =>
      action === "set"
        ? webhooks().updateProgrammeSettings({
            maxAttempts: int(opt(f, "max-attempts"), "max-attempts"),
            baseDelaySeconds: int(opt(f, "base-delay"), "base-delay"),
          })
        : webhooks().getProgrammeSettings({}),
    "webhooks pass": () => webhooks().runPass({}),
  },
};
