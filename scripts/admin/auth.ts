import { AuthService } from "@hb/contracts/auth/v1/auth_pb";
import { type CommandGroup, client, int, list, need, onOff, opt } from "./common.ts";

const auth = () => client(AuthService, "AUTH_ADDR", "127.0.0.1:50051");

export const authCommands: CommandGroup = {
  usage: [
    "customer create --name N --email E [--company C] [--country CC] [--currency EUR]",
    "customer get <customerId>",
    "customer list [--email E]",
    "customer suspend <customerId> | customer activate <customerId>",
    "person create --customer ID --name N --email E [--permissions view_services,manage_services,...]",
    "person get <personId>",
    "person permissions <personId> --set p1,p2   (empty --set '' removes all)",
    "key create --person ID --label L [--scopes services,orders,billing,destructive] [--allowlist 'ip, cidr'] [--expires YYYY-MM-DD]",
    "key edit <keyId> --person ID [--label L] [--allowlist '...'] [--expires YYYY-MM-DD|'']",
    "key revoke <keyId> --person ID",
    "key list --person ID",
    "key log --person ID [--key ID] [--limit N]",
    "staff create --name N --email E [--permissions view_clients,edit_clients]",
    "staff keys --staff ID --customer ID",
    "staff log --staff ID --customer ID [--key ID]",
    "staff revoke --staff ID --key ID",
    "settings get",
    "settings set [--customer-api on|off] [--hourly-limit N] [--key-limit N] [--inventory on|off] [--vps on|off]",
  ],
  commands: {
    "customer create": (_p, f) =>
      auth().createCustomer({
        name: need(f, "name"),
        email: need(f, "email"),
        company: opt(f, "company") ?? "",
        country: opt(f, "country") ?? "",
        currency: opt(f, "currency") ?? "EUR",
      }),
    "customer get": ([id]) => auth().getCustomer({ customerId: id ?? "" }),
    "customer list": (_p, f) => auth().listCustomers({ email: opt(f, "email") ?? "" }),
    "customer suspend": ([id]) => auth().setCustomerStatus({ customerId: id ?? "", status: "suspended" }),
    "customer activate": ([id]) => auth().setCustomerStatus({ customerId: id ?? "", status: "active" }),
    "person create": (_p, f) =>
      auth().createPerson({
        customerId: need(f, "customer"),
        name: need(f, "name"),
        email: need(f, "email"),
        permissions: list(opt(f, "permissions")),
      }),
    "person get": ([id]) => auth().getPerson({ personId: id ?? "" }),
    "person permissions": ([id], f) =>
      auth().setPermissions({ personId: id ?? "", permissions: list(opt(f, "set")) }),
    "key create": (_p, f) =>
      auth().createKey({
        personId: need(f, "person"),
        label: need(f, "label"),
        scopes: list(opt(f, "scopes")),
        ipAllowlist: opt(f, "allowlist") ?? "",
        expiresOn: opt(f, "expires") ?? "",
      }),
    "key edit": ([id], f) =>
      auth().updateKey({
        personId: need(f, "person"),
        keyId: id ?? "",
        label: opt(f, "label"),
        ipAllowlist: opt(f, "allowlist"),
        expiresOn: opt(f, "expires"),
      }),
    "key revoke": ([id], f) => auth().revokeKey({ personId: need(f, "person"), keyId: id ?? "" }),
    "key list": (_p, f) => auth().listKeys({ personId: need(f, "person") }),
    "key log": (_p, f) =>
      auth().listRequestLog({
        personId: need(f, "person"),
        keyId: opt(f, "key") ?? "",
        limit: int(opt(f, "limit"), "limit") ?? 100,
      }),
    "staff create": (_p, f) =>
      auth().createStaff({
        name: need(f, "name"),
        email: need(f, "email"),
        permissions: list(opt(f, "permissions")),
      }),
    "staff keys": (_p, f) =>
      auth().staffListKeys({ staffId: need(f, "staff"), customerId: need(f, "customer") }),
    "staff log": (_p, f) =>
      auth().staffListRequestLog({
        staffId: need(f, "staff"),
        customerId: need(f, "customer"),
        keyId: opt(f, "key") ?? "",
        limit: int(opt(f, "limit"), "limit") ?? 100,
      }),
    "staff revoke": (_p, f) => auth().staffRevokeKey({ staffId: need(f, "staff"), keyId: need(f, "key") }),
    "settings get": () => auth().getSettings({}),
    "settings set": (_p, f) =>
      auth().updateSettings({
        customerApiEnabled: onOff(opt(f, "customer-api"), "customer-api"),
        hourlyRequestLimit: int(opt(f, "hourly-limit"), "hourly-limit"),
        activeKeyLimit: int(opt(f, "key-limit"), "key-limit"),
        inventoryModule: onOff(opt(f, "inventory"), "inventory"),
        vpsModule: onOff(opt(f, "vps"), "vps"),
      }),
  },
};
