import { toJson } from "@bufbuild/protobuf";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { ProductKindSchema, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { ComputeStaffService } from "@hb/contracts/hb/compute/v1/compute_staff_pb";
import {
  ControlSchema,
  InstanceStateSchema,
  MachineKindSchema,
  MachineSummarySchema,
} from "@hb/contracts/hb/compute/v1/machines_pb";
import { type CommandGroup, client, command, enumFlag, list } from "./common.ts";

const billing = () => client([BillingService, BillingStaffService], "BILLING_ADDR", "127.0.0.1:50053");
const compute = () => client([ComputeStaffService], "COMPUTE_ADDR", "127.0.0.1:50052");

export const computeCommands: CommandGroup = {
  title: "Machines",
  commands: {
    "machine create": command({
      summary: "Creates an active service with its machine, in the given state",
      flags: {
        customer: { type: "string", value: "ID", required: true, help: "the customer's id" },
        kind: { type: "string", value: "vps|dedicated|game", help: "default vps" },
        product: { type: "string", value: "ID", help: "the product's id" },
        hostname: { type: "string", value: "H", help: "host name" },
        state: { type: "string", value: "running|stopped|creating|error", help: "default running" },
        "controller-fails": { type: "boolean", help: "power actions answer 424" },
        disable: {
          type: "string",
          value: "LIST",
          field: "disabled_controls",
          help: "controls to disable: reinstall,password,snapshots,...",
        },
      },
      run: async (_a, f) => {
        const kind = f.kind ?? "vps";
        // Every flag is checked before anything is created.
        const machineFlags = {
          kind: enumFlag(MachineKindSchema, "kind", kind),
          state: enumFlag(InstanceStateSchema, "state", f.state ?? "running"),
          disabledControls: list(f.disable).map((c) => enumFlag(ControlSchema, "disable", c)),
        };
        const { service } = await billing().adminCreateService({
          customerId: f.customer,
          kind: enumFlag(ProductKindSchema, "kind", kind),
          productId: f.product ?? "",
          hostname: f.hostname ?? "",
          status: ServiceStatus.ACTIVE,
        });
        const { machine } = await compute().adminCreateMachine({
          serviceId: service!.id,
          customerId: f.customer,
          hostname: service!.hostname,
          controllerFails: f["controller-fails"] === true,
          ...machineFlags,
        });
        return { service, machine: machine && toJson(MachineSummarySchema, machine) };
      },
    }),
  },
};
