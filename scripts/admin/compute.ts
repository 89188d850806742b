import { BillingService } from "@hb/contracts/billing/v1/billing_pb";
import { ComputeService } from "@hb/contracts/compute/v1/compute_pb";
import { type CommandGroup, client, need, opt } from "./common.ts";

const billing = () => client(BillingService, "BILLING_ADDR", "127.0.0.1:50053");
const compute = () => client(ComputeService, "COMPUTE_ADDR", "127.0.0.1:50052");

export const computeCommands: CommandGroup = {
  usage: [
    "machine create --customer ID [--kind vps|dedicated|game] [--product ID] [--hostname H] [--state running|stopped|creating|error]",
    "               [--controller-fails] [--disable reinstall,password,snapshots,...]   (an active service with its machine, in that state)",
  ],
  commands: {
    "machine create": async (_p, f) => {
      const kind = opt(f, "kind") ?? "vps";
      const customerId = need(f, "customer");
      const { service } = await billing().adminCreateService({
        customerId,
        kind,
        productId: opt(f, "product") ?? "",
        hostname: opt(f, "hostname") ?? "",
        status: "active",
      });
      const machine = await compute().adminCreateMachine({
        serviceId: service!.id,
        customerId,
        kind,
        hostname: service!.hostname,
        state: opt(f, "state") ?? "running",
        controllerFails: f["controller-fails"] === true,
        disabledControls: opt(f, "disable") ?? "",
      });
      return { service, machine: JSON.parse(machine.json) };
    },
  },
};
