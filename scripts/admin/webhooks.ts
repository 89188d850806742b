import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { PartnerStatus, PartnerStatusSchema } from "@hb/contracts/hb/auth/v1/partners_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { enumOfWord } from "@hb/platform";
import { type ArgSpec, type CommandGroup, client, command, list, UsageError } from "./common.ts";

const auth = () => client([AuthService, AuthStaffService], "AUTH_ADDR", "127.0.0.1:50051");
const webhooks = () => client([WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR", "127.0.0.1:50054");

const partnerArg: ArgSpec = { name: "customerId", help: "the partner's customer id", field: "customer_id" };
// The webhooks service calls the same id partner_id.
const partnerArgAtWebhooks: ArgSpec = { ...partnerArg, field: "partner_id" };
const partnerStatus = (status: PartnerStatus, summary: string) =>
  command({
    summary,
    args: [partnerArg],
    run: ([id]) => auth().setPartnerStatus({ customerId: id, status }),
  });

export const webhookCommands: CommandGroup = {
  title: "Partners (resellers) and webhooks",
  commands: {
    "partner create": command({
      summary: "Makes a customer a partner and prints the signing secret once",
      flags: {
        customer: { type: "string", value: "ID", required: true, help: "the customer's id" },
        status: { type: "string", value: "pending|active|suspended", help: "default pending" },
      },
      run: (_a, f) => {
        const status = enumOfWord<PartnerStatus>(PartnerStatusSchema, f.status ?? "pending");
        if (!status) throw new UsageError(`--status takes pending, active or suspended, not "${f.status}".`);
        return auth().createPartner({ customerId: f.customer, status });
      },
    }),
    "partner activate": partnerStatus(PartnerStatus.ACTIVE, "Activates a partner: signed writes work"),
    "partner suspend": partnerStatus(PartnerStatus.SUSPENDED, "Suspends a partner: reads only"),
    "partner pending": partnerStatus(PartnerStatus.PENDING, "Sets a partner back to pending: reads only"),
    "partner rotate-secret": command({
      summary: "Prints a new signing secret once; the old one stops at once",
      args: [partnerArg],
      flags: { clear: { type: "boolean", help: "remove the secret without issuing a new one" } },
      run: ([id], f) => auth().rotatePartnerSecret({ customerId: id, clear: f.clear === true }),
    }),
    "partner set-url": command({
      summary: "Sets a partner's webhook URL",
      args: [partnerArgAtWebhooks],
      flags: {
        url: {
          type: "string",
          value: "URL",
          required: true,
          allowEmpty: true,
          help: "'' clears it",
        },
      },
      run: ([id], f) => webhooks().setWebhookUrl({ partnerId: id, url: f.url }),
    }),
    "partner deliveries": command({
      summary: "Staff view of a partner's webhook deliveries",
      args: [partnerArgAtWebhooks],
      flags: { limit: { type: "int", help: "at most this many (default 100)" } },
      run: ([id], f) => webhooks().listDeliveries({ partnerId: id, limit: f.limit ?? 100 }),
    }),
    "webhooks settings get": command({
      summary: "Shows the webhook programme's settings",
      run: () => webhooks().getProgrammeSettings({}),
    }),
    "webhooks settings set": command({
      summary: "Changes the webhook programme's settings (only the flags given)",
      flags: {
        "max-attempts": {
          type: "int",
          value: "1-10",
          field: "max_attempts",
          help: "deliveries tried per event",
        },
        "base-delay": {
          type: "int",
          value: "10-3600",
          field: "base_delay_seconds",
          help: "first retry delay, seconds",
        },
        "allow-destination": {
          type: "string",
          value: "HOST:PORT[,…]",
          field: "add_allowed_destinations",
          help: "exact host:port a webhook URL may name although not public (a dev receiver)",
        },
        "remove-destination": {
          type: "string",
          value: "HOST:PORT[,…]",
          field: "remove_allowed_destinations",
          help: "stop allowing these",
        },
        "clear-allowed-destinations": { type: "boolean", help: "remove every allowed destination" },
      },
      run: (_a, f) =>
        webhooks().updateProgrammeSettings({
          maxAttempts: f["max-attempts"],
          baseDelaySeconds: f["base-delay"],
          clearAllowedDestinations: f["clear-allowed-destinations"] === true,
          removeAllowedDestinations: list(f["remove-destination"]),
          addAllowedDestinations: list(f["allow-destination"]),
        }),
    }),
    "webhooks pass": command({ summary: "Runs a delivery pass now", run: () => webhooks().runPass({}) }),
  },
};
