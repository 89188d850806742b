import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { PortalService, Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { ALL_PERMISSIONS, PAGE_SIZE, SCOPES, STAFF_PERMISSIONS } from "@hb/platform";
import { type ArgSpec, type CommandGroup, client, command, dayStart, list } from "./common.ts";

const auth = () => client([AuthService, AuthStaffService], "AUTH_ADDR", "127.0.0.1:50051");
const portal = () => client([PortalService], "AUTH_ADDR", "127.0.0.1:50051");

/** A one-time set-password link (the portal's or the admin panel's) for a person or staff member. */
async function passwordLink(realm: Realm, subjectId: string): Promise<string> {
  const { token } = await portal().createPasswordLink({ realm, subjectId });
  const base = process.env.PUBLIC_URL ?? `http://localhost:${process.env.PORT ?? "8080"}`;
  return `${base}${realm === Realm.ADMIN ? "/admin" : "/portal"}/set-password?token=${encodeURIComponent(token)}`;
}

const customerArg: ArgSpec = { name: "customerId", help: "the customer's id", field: "customer_id" };
const personArg: ArgSpec = { name: "personId", help: "the person's id", field: "person_id" };
const keyArg: ArgSpec = { name: "keyId", help: "the key's id", field: "key_id" };
// Help texts list the values the services accept, from the same constants.
const scopesHelp = `comma-separated, of ${SCOPES.filter((s) => s !== "read").join(",")}; read is always included (account: reseller partners only)`;
const permissionsHelp = `comma-separated, of ${ALL_PERMISSIONS.join(",")}`;
const email = { type: "string", value: "E", required: true, help: "e-mail address" } as const;
const name = { type: "string", value: "N", required: true, help: "full name" } as const;
const keyOwner = {
  type: "string",
  value: "ID",
  required: true,
  help: "the person who holds the key (a person id, e.g. the owner person id printed by npm start)",
} as const;

export const authCommands: CommandGroup = {
  title: "Accounts, people, keys and company settings",
  commands: {
    "customer create": command({
      summary: "Creates a customer and its owner (one customer per e-mail address)",
      flags: {
        name,
        email,
        company: { type: "string", value: "C", help: "company name" },
        country: { type: "string", value: "CC", help: "two-letter country code" },
        currency: { type: "string", value: "EUR", help: "account currency (ISO code; default EUR)" },
      },
      run: (_a, f) =>
        auth().createCustomer({
          name: f.name,
          email: f.email,
          company: f.company ?? "",
          country: f.country ?? "",
          currency: f.currency ?? "EUR",
        }),
    }),
    "customer get": command({
      summary: "Shows a customer and its people",
      args: [customerArg],
      run: ([id]) => auth().getCustomer({ customerId: id }),
    }),
    "customer list": command({
      summary: "Lists customers (at most 1000)",
      flags: { email: { type: "string", value: "E", help: "only the customer with this address" } },
      run: (_a, f) => auth().listCustomers({ email: f.email ?? "" }),
    }),
    "customer update": command({
      summary: "Changes a customer's name, e-mail, company or country (flags not given keep their value)",
      args: [customerArg],
      flags: {
        name: { type: "string", value: "N", help: "the owner's name" },
        email: { type: "string", value: "E", help: "the account's e-mail address (unique among customers)" },
        company: { type: "string", value: "C", allowEmpty: true, help: "company name ('' clears it)" },
        country: {
          type: "string",
          value: "CC",
          allowEmpty: true,
          help: "two-letter country code ('' clears it)",
        },
      },
      run: async ([id], f) => {
        const { customer: c } = await auth().getCustomer({ customerId: id });
        return auth().updateCustomer({
          customerId: id,
          name: f.name ?? c?.name ?? "",
          email: f.email ?? c?.email ?? "",
          company: f.company ?? c?.company ?? "",
          country: f.country ?? c?.country ?? "",
        });
      },
    }),
    "customer suspend": command({
      summary: "Suspends a customer: its account becomes read-only",
      args: [customerArg],
      flags: { reason: { type: "string", value: "R", help: "why (kept with the status)" } },
      run: ([id], f) =>
        auth().setCustomerStatus({
          customerId: id,
          status: CustomerStatus.SUSPENDED,
          reason: f.reason ?? "",
        }),
    }),
    "customer activate": command({
      summary: "Lifts a customer's suspension",
      args: [customerArg],
      flags: { reason: { type: "string", value: "R", help: "why (kept with the status)" } },
      run: ([id], f) =>
        auth().setCustomerStatus({ customerId: id, status: CustomerStatus.ACTIVE, reason: f.reason ?? "" }),
    }),
    "audit list": command({
      summary: "The admin panel's audit log of staff writes, newest first",
      flags: {
        customer: { type: "string", value: "ID", help: "only this customer's (default: all)" },
        page: { type: "int", value: "N", help: "page, from 1" },
      },
      run: (_a, f) =>
        auth().listStaffActions({ customerId: f.customer ?? "", page: f.page ?? 0, limit: PAGE_SIZE.staff }),
    }),
    "person create": command({
      summary: "Adds a team member to a customer",
      flags: {
        customer: { type: "string", value: "ID", required: true, help: "the customer's id" },
        name,
        email,
        permissions: {
          type: "string",
          value: "LIST",
          help: permissionsHelp,
        },
      },
      run: (_a, f) =>
        auth().createPerson({
          customerId: f.customer,
          name: f.name,
          email: f.email,
          permissions: list(f.permissions),
        }),
    }),
    "person get": command({
      summary: "Shows a person and their customer",
      args: [personArg],
      run: ([id]) => auth().getPerson({ personId: id }),
    }),
    "person permissions": command({
      summary: "Replaces a team member's permissions",
      args: [personArg],
      flags: {
        set: {
          type: "string",
          value: "LIST",
          required: true,
          allowEmpty: true,
          field: "permissions",
          help: `${permissionsHelp}; '' removes all`,
        },
      },
      run: ([id], f) => auth().setPermissions({ personId: id, permissions: list(f.set) }),
    }),
    "key create": command({
      summary: "Issues an API key and prints its secret once",
      flags: {
        person: keyOwner,
        label: { type: "string", value: "L", required: true, help: "a name for the key" },
        scopes: {
          type: "string",
          value: "LIST",
          help: scopesHelp,
        },
        allowlist: {
          type: "string",
          value: "'IP, CIDR'",
          field: "ip_allowlist",
          help: "addresses the key may be used from (default: any)",
        },
        expires: { type: "string", value: "YYYY-MM-DD", field: "expires_on", help: "last day the key works" },
      },
      run: (_a, f) =>
        auth().createKey({
          personId: f.person,
          label: f.label,
          scopes: list(f.scopes),
          ipAllowlist: f.allowlist ?? "",
          expiresOn: f.expires ? dayStart("expires", f.expires) : undefined,
        }),
    }),
    "key edit": command({
      summary: "Changes a key's label, allowlist or expiry",
      args: [keyArg],
      flags: {
        person: keyOwner,
        label: { type: "string", value: "L", help: "a new name" },
        allowlist: {
          type: "string",
          value: "'IP, CIDR'",
          field: "ip_allowlist",
          help: "'' allows any address",
        },
        expires: { type: "string", value: "YYYY-MM-DD", field: "expires_on", help: "'' never expires" },
      },
      run: ([id], f) =>
        auth().updateKey({
          personId: f.person,
          keyId: id,
          label: f.label,
          ipAllowlist: f.allowlist,
          expiry:
            f.expires === undefined
              ? undefined
              : f.expires === ""
                ? { case: "noExpiry", value: true }
                : { case: "expiresOn", value: dayStart("expires", f.expires) },
        }),
    }),
    "key revoke": command({
      summary: "Revokes a key at once",
      args: [keyArg],
      flags: { person: keyOwner },
      run: ([id], f) => auth().revokeKey({ personId: f.person, keyId: id }),
    }),
    "key list": command({
      summary: "Lists a person's keys",
      flags: { person: keyOwner },
      run: (_a, f) => auth().listKeys({ personId: f.person }),
    }),
    "key log": command({
      summary: "Shows the request log of a person's keys",
      flags: {
        person: keyOwner,
        key: { type: "string", value: "ID", help: "only this key" },
        limit: { type: "int", help: "at most this many entries (default 100)" },
      },
      run: (_a, f) =>
        auth().listRequestLog({ personId: f.person, keyId: f.key ?? "", limit: f.limit ?? 100 }),
    }),
    "staff create": command({
      summary:
        "Creates a staff member (or updates the one with that address) and prints a one-time link to set the admin panel password",
      flags: {
        name,
        email,
        permissions: {
          type: "string",
          value: "LIST",
          help: `comma-separated, of ${STAFF_PERMISSIONS.join(",")}`,
        },
      },
      run: async (_a, f) => {
        const { staff } = await auth().createStaff({
          name: f.name,
          email: f.email,
          permissions: list(f.permissions),
        });
        return { staff, setPasswordLink: await passwordLink(Realm.ADMIN, staff!.id) };
      },
    }),
    "staff link": command({
      summary: "Prints a new one-time link with which a staff member sets their admin panel password",
      args: [{ name: "staffId", help: "the staff member's id", field: "subject_id" }],
      run: async ([id]) => ({ setPasswordLink: await passwordLink(Realm.ADMIN, id) }),
    }),
    "staff list": command({
      summary: "Lists the staff members",
      run: () => portal().listStaff({}),
    }),
    "person link": command({
      summary: "Prints a one-time link with which a person without a password sets their first one",
      args: [{ name: "personId", help: "the person's id", field: "subject_id" }],
      run: async ([id]) => ({ setPasswordLink: await passwordLink(Realm.PORTAL, id) }),
    }),
    "staff keys": command({
      summary: "A staff member's view of a customer's keys",
      flags: {
        staff: { type: "string", value: "ID", required: true, help: "the staff member's id" },
        customer: { type: "string", value: "ID", required: true, help: "the customer's id" },
      },
      run: (_a, f) => auth().staffListKeys({ staffId: f.staff, customerId: f.customer }),
    }),
    "staff log": command({
      summary: "A staff member's view of a customer's request log",
      flags: {
        staff: { type: "string", value: "ID", required: true, help: "the staff member's id" },
        customer: { type: "string", value: "ID", required: true, help: "the customer's id" },
        key: { type: "string", value: "ID", help: "only this key" },
        limit: { type: "int", help: "at most this many entries (default 100)" },
      },
      run: (_a, f) =>
        auth().staffListRequestLog({
          staffId: f.staff,
          customerId: f.customer,
          keyId: f.key ?? "",
          limit: f.limit ?? 100,
        }),
    }),
    "staff revoke": command({
      summary: "A staff member revokes a customer's key",
      flags: {
        staff: { type: "string", value: "ID", required: true, help: "the staff member's id" },
        key: { type: "string", value: "ID", required: true, help: "the key's id" },
      },
      run: (_a, f) => auth().staffRevokeKey({ staffId: f.staff, keyId: f.key }),
    }),
    "settings get": command({
      summary: "Shows the company-wide API settings",
      run: () => auth().getSettings({}),
    }),
    "settings set": command({
      summary: "Changes the company-wide API settings (only the flags given)",
      flags: {
        "customer-api": {
          type: "on-off",
          field: "customer_api_enabled",
          help: "the customer API as a whole",
        },
        "hourly-limit": { type: "int", field: "hourly_request_limit", help: "requests per key per hour" },
        "key-limit": { type: "int", field: "active_key_limit", help: "active keys per person" },
        inventory: { type: "on-off", field: "inventory_module", help: "the inventory module" },
        vps: { type: "on-off", field: "vps_module", help: "the VPS module" },
      },
      run: (_a, f) =>
        auth().updateSettings({
          customerApiEnabled: f["customer-api"],
          hourlyRequestLimit: f["hourly-limit"],
          activeKeyLimit: f["key-limit"],
          inventoryModule: f.inventory,
          vpsModule: f.vps,
        }),
    }),
  },
};
