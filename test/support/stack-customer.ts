/**
 * A customer of a private stack (own-stack.ts) driven over its API with a key of their own: the
 * set-up the clock-moving billing suites share (billing-cycle, money-holes).
 */
import assert from "node:assert/strict";
import type { OwnStack } from "../own-stack.ts";
import { eventually } from "./eventually.ts";

/** What crediting needs of billing's staff client. */
interface CreditDesk {
  adminAdjustCredit(req: {
    personId: string;
    customerId: string;
    amount: string;
    currency: string;
  }): Promise<unknown>;
}

let serial = 0;

/** A new EUR customer with `credit` (a decimal string; "0" for none) and a key of every scope. */
export async function stackCustomer(s: OwnStack, billing: CreditDesk, label: string, credit: string) {
  const { customer: c, owner } = await s.auth.createCustomer({
    name: label,
    email: `${label.toLowerCase()}-${++serial}-${Date.now()}@example.test`,
    currency: "EUR",
  });
  const key = (
    await s.auth.createKey({
      personId: owner!.id,
      label: "k",
      scopes: ["services", "orders", "billing", "destructive"],
      ipAllowlist: "",
    })
  ).secretKey;
  const ids = { customerId: c!.id, personId: owner!.id };
  const addCredit = async (amount: string) => {
    await billing.adminAdjustCredit({ ...ids, amount, currency: "EUR" });
  };
  if (credit !== "0") await addCredit(credit);
  const call = (method: string, path: string, body?: unknown) => s.call(method, path, key, body);
  const balance = async () => (await call("GET", "/account/balance")).body.data.balance as number;
  return { ...ids, key, call, balance, credit: addCredit };
}
export type StackCustomer = Awaited<ReturnType<typeof stackCustomer>>;

/** Orders `productId` for `c` and waits until the service is active; returns its id. */
export async function activeService(c: StackCustomer, productId: string, cycle = "monthly"): Promise<string> {
  const order = await c.call("POST", "/orders", { productId, billingCycle: cycle });
  assert.equal(order.status, 201, order.text);
  const id = order.body.data.services[0].id as string;
  await eventually(
    async () => (await c.call("GET", `/services/${id}`)).body.data?.status === "active",
    20_000,
  );
  return id;
}
