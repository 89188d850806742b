/**
 * Helpers for system tests: they talk HTTP to the real gateway and set up state through the
 * services' gRPC APIs, as the admin command does.
 */
import type { DescService } from "@bufbuild/protobuf";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { BillingStaffService } from "@hb/contracts/hb/billing/v1/billing_staff_pb";
import { BillingCycle, ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { ComputeStaffService } from "@hb/contracts/hb/compute/v1/compute_staff_pb";
import { Control, InstanceState, MachineKind } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { ServiceIdentity } from "@hb/platform";
import { signResellerRequest } from "@hb/webhook-signature";
import { contractViolation, onViolation } from "./contract.ts";
import { stackClient } from "./support/clients.ts";

export { eventually, untilAnswersOk } from "./support/eventually.ts";

export const GATEWAY = process.env.GATEWAY_URL ?? "http://127.0.0.1:8080";

/**
 * A client of the shared stack's backend at `addrEnv` for the service definitions listed, holding
 * the certificate of `as` (the admin surface's unless a test calls as the gateway or a backend).
 */
export function grpc<const D extends readonly DescService[]>(
  descs: D,
  addrEnv: string,
  as: ServiceIdentity = "admin",
) {
  return stackClient(process.env, descs, addrEnv, 10_000, as).client;
}

export const auth = grpc([AuthService, AuthStaffService], "AUTH_ADDR");

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
  body: any;
  text: string;
}

export async function api(
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(GATEWAY + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const violation = await contractViolation(GATEWAY, method, path, res.status, parsed);
  if (violation) onViolation(violation);
  return { status: res.status, headers: res.headers, body: parsed, text };
}

let counter = 0;
export const unique = (label: string) => `${label}-${process.pid}-${Date.now()}-${++counter}`;

export interface Account {
  customerId: string;
  ownerId: string;
  /** A key of the owner with every scope. */
  key: string;
  keyId: string;
}

/** A fresh customer whose owner holds a key with the given scopes (default: all). */
export async function newAccount(
  scopes: string[] = ["services", "orders", "billing", "destructive"],
  opts: { currency?: string } = {},
): Promise<Account> {
  const email = `${unique("cust")}@example.test`;
  const { customer, owner } = await auth.createCustomer({
    name: "Test Customer",
    email,
    company: "Test Co",
    country: "DE",
    currency: opts.currency ?? "EUR",
  });
  const { key, secretKey } = await auth.createKey({
    personId: owner!.id,
    label: "test",
    scopes,
    ipAllowlist: "",
  });
  return { customerId: customer!.id, ownerId: owner!.id, key: secretKey, keyId: key!.id };
}

/** A key for another person of the same account. */
export async function newMember(customerId: string, permissions: string[], scopes: string[] = []) {
  const { person } = await auth.createPerson({
    customerId,
    name: "Member",
    email: `${unique("m")}@example.test`,
    permissions,
  });
  const { key, secretKey } = await auth.createKey({
    personId: person!.id,
    label: "member",
    scopes,
    ipAllowlist: "",
  });
  return { personId: person!.id, key: secretKey, keyId: key!.id };
}

export const billing = grpc([BillingService, BillingStaffService], "BILLING_ADDR");
export const compute = grpc([ComputeStaffService], "COMPUTE_ADDR");

/** An exact amount as billing's contract takes it. */
export const amountOf = (amount: string, currency = "EUR") => ({ currency, amount });

/** Prices by cycle word ({ monthly: "10" }) as billing's contract takes them. */
export const cyclePrices = (prices: Record<string, string>, currency = "EUR") =>
  Object.entries(prices).map(([cycle, amount]) => ({
    cycle: BillingCycle[cycle.toUpperCase() as keyof typeof BillingCycle],
    price: amountOf(amount, currency),
  }));

/** A product kind word (vps, dedicated, game) as billing's contract takes it. */
export const kindOf = (kind: string) => ProductKind[kind.toUpperCase() as keyof typeof ProductKind];

/** A catalogue product of its own for a test (unique name), on the shared stack or `on` another. */
export async function newProduct(
  kind = "vps",
  prices: Record<string, string> = { monthly: "10.0000", annually: "100.0000" },
  currency = "EUR",
  on: Pick<typeof billing, "adminCreateProduct"> = billing,
) {
  const r = await on.adminCreateProduct({
    name: unique(`${kind} plan`),
    kind: kindOf(kind),
    prices: cyclePrices(prices, currency),
    vcpus: 2,
    memoryMb: 2048,
    diskGb: 40,
    location: "fra1",
    osImages: ["ubuntu-24.04", "debian-12"],
    currency,
  });
  return r.product!;
}

export async function addCredit(acct: Account, amount: string, currency = "EUR") {
  return billing.adminAdjustCredit({
    personId: acct.ownerId,
    customerId: acct.customerId,
    amount,
    currency,
    description: "test",
  });
}

/** The credit balance of the key's owner, as the API reports it. */
export async function balanceOf(key: string): Promise<number> {
  const r = await api("GET", "/api/v1/account/balance", { key });
  if (r.status !== 200) throw new Error(`balance: ${r.status} ${r.text}`);
  return r.body.data.balance as number;
}

export interface Partner {
  customerId: string;
  ownerId: string;
  secret: string;
  key: string;
}

/** A reseller partner with an account-scope key and its signing secret. */
export async function newPartner(status = PartnerStatus.ACTIVE): Promise<Partner> {
  const acct = await newAccount();
  const { signingSecret } = await auth.createPartner({ customerId: acct.customerId, status });
  const { secretKey } = await auth.createKey({
    personId: acct.ownerId,
    label: "reseller",
    scopes: ["account", "orders"],
    ipAllowlist: "",
  });
  return { customerId: acct.customerId, ownerId: acct.ownerId, secret: signingSecret, key: secretKey };
}

/** A signed reseller request: signature over "<timestamp>.<raw body>". */
export function signed(
  p: Partner,
  method: string,
  path: string,
  body?: unknown,
  opts: { secret?: string; timestamp?: string; headers?: Record<string, string> } = {},
) {
  const raw = body === undefined ? "" : JSON.stringify(body);
  return api(method, path, {
    key: p.key,
    rawBody: raw || undefined,
    headers: {
      ...opts.headers,
      "content-type": "application/json",
      ...signResellerRequest({ body: raw, secret: opts.secret ?? p.secret, timestamp: opts.timestamp }),
    },
  });
}

const MACHINE_KINDS = { vps: MachineKind.VPS, dedicated: MachineKind.DEDICATED, game: MachineKind.GAME };
const INSTANCE_STATES = {
  creating: InstanceState.CREATING,
  running: InstanceState.RUNNING,
  stopped: InstanceState.STOPPED,
  error: InstanceState.ERROR,
};
const CONTROLS = {
  power: Control.POWER,
  reinstall: Control.REINSTALL,
  password: Control.PASSWORD,
  snapshots: Control.SNAPSHOTS,
  backups: Control.BACKUPS,
  rescue: Control.RESCUE,
};

/** A service in billing and its machine in compute, in the state asked for. */
export async function newMachine(
  acct: Account,
  opts: {
    kind?: keyof typeof MACHINE_KINDS;
    state?: keyof typeof INSTANCE_STATES;
    failBuild?: boolean;
    controllerFails?: boolean;
    /** Comma-separated control names. */
    disabledControls?: string;
  } = {},
) {
  const kind = opts.kind ?? "vps";
  const product = await newProduct(kind);
  const { service } = await billing.adminCreateService({
    customerId: acct.customerId,
    productId: product.id,
    kind: kindOf(kind),
    status: ServiceStatus.ACTIVE,
  });
  await compute.adminCreateMachine({
    serviceId: service!.id,
    customerId: acct.customerId,
    kind: MACHINE_KINDS[kind],
    state: INSTANCE_STATES[opts.state ?? "running"],
    failBuild: opts.failBuild ?? false,
    controllerFails: opts.controllerFails ?? false,
    disabledControls: (opts.disabledControls?.split(",") ?? []).map(
      (c) => CONTROLS[c as keyof typeof CONTROLS],
    ),
  });
  return service!.id;
}
