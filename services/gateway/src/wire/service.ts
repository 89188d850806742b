import { z } from "zod";
import { currency, cycle, decimal4 } from "./money.ts";
import { pagination, paginationExample } from "./pagination.ts";
import { CANCELLATION_TYPE_WORDS, INSTANCE_STATE_WORDS, SERVICE_STATUS_WORDS } from "./words.ts";

/** Billing states of a service (spec, States: from an order; then suspended, terminated, cancelled). */
export const SERVICE_STATUSES = SERVICE_STATUS_WORDS;
export const serviceStatus = z.enum(SERVICE_STATUSES);

/** A machine's instance state (spec: VPS instance.state). */
export const INSTANCE_STATES = INSTANCE_STATE_WORDS;
const instanceState = z.enum(INSTANCE_STATES);

export const productRef = z.object({ id: z.uuid(), name: z.string() });

export const serviceBilling = z.object({
  cycle,
  amount: decimal4,
  currency,
  next_due_date: z.iso.datetime(),
});

/** A cancellation scheduled for the end of the term (an immediate one terminates instead). */
export const cancellation = z.object({
  type: z.enum(CANCELLATION_TYPE_WORDS),
  reason: z.string(),
  requested_at: z.iso.datetime(),
  effective_at: z.iso.datetime(),
});

/** The service record of the list, and of the cancel and withdraw answers. */
export const serviceSummary = z.object({
  id: z.uuid(),
  name: z.string(),
  hostname: z.string(),
  kind: z.string().meta({ description: "vps, dedicated, game, ..." }),
  status: serviceStatus,
  product: productRef,
  billing: serviceBilling,
  cancellation: cancellation.nullable(),
  created_at: z.iso.datetime(),
});

/** The service as billing records it: the summary with its order and why provisioning failed. */
export const serviceRecord = serviceSummary.extend({
  order_id: z.uuid().nullable(),
  failure_reason: z.string().nullable(),
});

/** GET /services/{id}: the record with the machine behind it (null for a service without one). */
export const serviceDetail = serviceRecord.extend({
  machine: z
    .object({
      provider: z.string(),
      primary_ip: z.string(),
      location: z.string(),
      state: instanceState.nullable().meta({ description: "null until the machine is built" }),
    })
    .nullable(),
});

/** The stats object of the services list: counts and recurring amounts by status. */
export const serviceStats = z.object({
  total: z.int().min(0),
  by_status: z.partialRecord(serviceStatus, z.int().min(0)),
  amount_by_status: z.partialRecord(serviceStatus, z.number()),
});

export const serviceList = z.object({
  services: z.array(serviceSummary),
  pagination,
  stats: serviceStats,
});

export const serviceSummaryExample = {
  id: "0195e3a0-7c1e-7b3a-9f5e-2d4c6a8b0c11",
  name: "VPS Small",
  hostname: "web-1.example.com",
  kind: "vps",
  status: "active",
  product: { id: "0195e39f-1a2b-7c3d-8e4f-5a6b7c8d9e01", name: "VPS Small" },
  billing: {
    cycle: "monthly",
    amount: "12.5000",
    currency: "EUR",
    next_due_date: "2026-12-23T10:00:00.000Z",
  },
  cancellation: null,
  created_at: "2026-11-23T10:00:00.000Z",
};

export const serviceRecordExample = {
  ...serviceSummaryExample,
  order_id: "0195e3a0-7b00-7d1e-8f20-3a4b5c6d7e8f",
  failure_reason: null,
};

export const serviceDetailExample = {
  ...serviceRecordExample,
  machine: { provider: "simulator", primary_ip: "203.0.113.10", location: "fra1", state: "running" },
};

export const serviceListExample = {
  services: [serviceSummaryExample],
  pagination: paginationExample,
  stats: { total: 1, by_status: { active: 1 }, amount_by_status: { active: 12.5 } },
};
