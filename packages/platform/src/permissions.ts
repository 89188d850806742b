/** Account permissions of a person in a shared account. The owner holds all of them. */
export const PERMISSIONS = {
  view_services: "View Services",
  view_invoices: "View Invoices",
  view_billing: "View Billing",
  manage_services: "Manage Services",
  power_services: "Power Services",
  pay_invoices: "Pay Invoices",
  cancel_services: "Cancel Services",
} as const;
export type Permission = keyof typeof PERMISSIONS;
export const ALL_PERMISSIONS = Object.keys(PERMISSIONS) as Permission[];
export const isPermission = (p: string): p is Permission => p in PERMISSIONS;

/** `account` is the reseller scope: only a reseller partner's keys may hold it. */
export const SCOPES = ["read", "services", "orders", "billing", "destructive", "account"] as const;
export type Scope = (typeof SCOPES)[number];
export const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/** The spec's scope table: a person may choose a scope only if they hold one of these. */
export const SCOPE_NEEDS: Record<Scope, Permission[]> = {
  read: ["view_services", "view_invoices", "view_billing"],
  services: ["manage_services", "power_services"],
  orders: ["manage_services"],
  billing: ["pay_invoices"],
  destructive: ["cancel_services"],
  account: ["manage_services"],
};

/** approve_overpayments: crediting a bank transfer above what the customer asked for (needs edit_clients too). */
export const STAFF_PERMISSIONS = ["view_clients", "edit_clients", "approve_overpayments"] as const;
export type StaffPermission = (typeof STAFF_PERMISSIONS)[number];

export const holdsAny = (held: readonly string[], needed: readonly string[]) =>
  needed.length === 0 || needed.some((p) => held.includes(p));

export const describeNeeds = (needed: readonly Permission[]) =>
  needed.map((p) => PERMISSIONS[p]).join(" or ");
