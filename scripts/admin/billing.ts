import { BillingService } from "@hb/contracts/billing/v1/billing_pb";
import { type CommandGroup, client, list, need, opt } from "./common.ts";

const billing = () => client(BillingService, "BILLING_ADDR", "127.0.0.1:50053");
const parsed = (r: { json: string } | undefined) => (r ? JSON.parse(r.json) : null);

function prices(text: string): Record<string, string> {
  // "monthly=10,annually=100"
  return Object.fromEntries(
    list(text).map((p) => {
      const [cycle, price] = p.split("=");
      return [cycle.trim(), (price ?? "").trim()];
    }),
  );
}

export const billingCommands: CommandGroup = {
  usage: [
    "credit add --person ID --customer ID --amount 100 [--currency EUR] [--description D]   (negative removes)",
    "product create --name N --kind vps|dedicated|game --prices monthly=10,annually=100 [--vcpus 2 --memory 2048 --disk 40 --location fra1 --os ubuntu-24.04,debian-12 --currency EUR] [--min-credit 10]   (hourly=0.02 in --prices for an hourly product)",
    "product list",
    "service create --customer ID [--product ID] [--kind vps] [--hostname H] [--status active] [--provision]",
    "service suspend|unsuspend|terminate <serviceId> [--reason R]",
    "invoice create --service ID [--amount 10] [--kind invoice|proforma] [--description D]",
  ],
  commands: {
    "credit add": async (_p, f) =>
      billing().adminAdjustCredit({
        personId: need(f, "person"),
        customerId: need(f, "customer"),
        amount: need(f, "amount"),
        currency: opt(f, "currency") ?? "EUR",
        description: opt(f, "description") ?? "",
      }),
    "product create": async (_p, f) =>
      parsed(
        (
          await billing().adminCreateProduct({
            name: need(f, "name"),
            kind: opt(f, "kind") ?? "vps",
            prices: prices(need(f, "prices")),
            vcpus: Number(opt(f, "vcpus") ?? 0),
            memoryMb: Number(opt(f, "memory") ?? 0),
            diskGb: Number(opt(f, "disk") ?? 0),
            location: opt(f, "location") ?? "",
            osImages: list(opt(f, "os")),
            currency: opt(f, "currency") ?? "EUR",
            minCredit: opt(f, "min-credit") ?? "",
          })
        ).product,
      ),
    "product list": async () => parsed((await billing().listProducts({})).result),
    "service create": async (_p, f) =>
      billing().adminCreateService({
        customerId: need(f, "customer"),
        productId: opt(f, "product") ?? "",
        kind: opt(f, "kind") ?? "vps",
        hostname: opt(f, "hostname") ?? "",
        name: opt(f, "name") ?? "",
        status: opt(f, "status") ?? "",
        provision: f.provision === true || f.provision === "true",
        osImageId: opt(f, "os") ?? "",
      }),
    "service suspend": ([id], f) =>
      billing().adminSetServiceState({
        serviceId: id ?? "",
        action: "suspend",
        reason: opt(f, "reason") ?? "",
      }),
    "service unsuspend": ([id], f) =>
      billing().adminSetServiceState({
        serviceId: id ?? "",
        action: "unsuspend",
        reason: opt(f, "reason") ?? "",
      }),
    "service terminate": ([id], f) =>
      billing().adminSetServiceState({
        serviceId: id ?? "",
        action: "terminate",
        reason: opt(f, "reason") ?? "",
      }),
    "invoice create": async (_p, f) =>
      parsed(
        (
          await billing().adminCreateInvoice({
            serviceId: need(f, "service"),
            amount: opt(f, "amount") ?? "",
            kind: opt(f, "kind") ?? "invoice",
            description: opt(f, "description") ?? "",
          })
        ).document,
      ),
  },
};

billingCommands.usage.push("product option --product ID --name N [--monthly 2.50] [--one-time 10]");
billingCommands.commands["product option"] = async (_p, f) =>
  parsed(
    (
      await billing().adminAddProductOption({
        productId: need(f, "product"),
        name: need(f, "name"),
        recurringPrice: opt(f, "monthly") ?? "",
        oneTimePrice: opt(f, "one-time") ?? "",
      })
    ).option,
  );
