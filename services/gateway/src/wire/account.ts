import { ALL_PERMISSIONS, type Permission } from "@hb/platform";
import { z } from "zod";
import { currency } from "./money.ts";
import { serviceStatus } from "./service.ts";
import { CUSTOMER_STATUS_WORDS } from "./words.ts";

/** GET /account: profile, company, country, currency, credit balance and permissions in force. */
export const account = z.object({
  id: z.uuid(),
  name: z.string(),
  email: z.string(),
  company: z.string(),
  country: z.string(),
  currency,
  status: z.enum(CUSTOMER_STATUS_WORDS),
  credit_balance: z.number(),
  person: z.object({ id: z.uuid(), name: z.string(), email: z.string(), is_owner: z.boolean() }),
  permissions: z.array(z.enum(ALL_PERMISSIONS as [Permission, ...Permission[]])),
});

export const accountBalance = z.object({ balance: z.number(), currency });

/** The spec's account usage object. */
export const accountUsage = z.object({
  services: z.object({
    total: z.int().min(0),
    by_status: z.partialRecord(serviceStatus, z.int().min(0)),
  }),
  recurring_monthly_amount: z.number(),
  unpaid_invoices: z.object({ count: z.int().min(0), total: z.number() }),
  paid_this_month: z.number(),
  hourly_charges_this_month: z.number(),
  balance: z.number(),
  currency: currency.meta({ description: "empty until the account holds credit" }),
});

export const accountExample = {
  id: "0195e39e-0a1b-7c2d-8e3f-4a5b6c7d8e01",
  name: "Ada Lovelace",
  email: "ada@example.com",
  company: "Analytical Engines Ltd",
  country: "GB",
  currency: "EUR",
  status: "active",
  credit_balance: 87.5,
  person: {
    id: "0195e39e-0a1b-7c2d-8e3f-4a5b6c7d8e02",
    name: "Ada Lovelace",
    email: "ada@example.com",
    is_owner: true,
  },
  permissions: [...ALL_PERMISSIONS],
};

export const accountBalanceExample = { balance: 87.5, currency: "EUR" };

export const accountUsageExample = {
  services: { total: 3, by_status: { active: 2, pending_payment: 1 } },
  recurring_monthly_amount: 25,
  unpaid_invoices: { count: 1, total: 12.5 },
  paid_this_month: 37.5,
  hourly_charges_this_month: 0,
  balance: 87.5,
  currency: "EUR",
};
