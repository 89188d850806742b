import { z } from "zod";
import { paginationExample } from "./pagination.ts";
import { serviceBilling as billingTerms, cancellation, INSTANCE_STATES, productRef } from "./service.ts";
import { CONTROL_WORDS, JOB_STATUS_WORDS, POWER_STATE_WORDS } from "./words.ts";

/** The spec's VPS billing states (billing's own states folded onto them). */
export const VPS_STATUSES = ["pending", "active", "suspended", "terminated"] as const;
export { INSTANCE_STATES };
/** The controls a plan can switch off; `capabilities` says which are on. */
export const CONTROLS = CONTROL_WORDS;

export const ipAddress = z.object({
  address: z.string(),
  version: z.union([z.literal(4), z.literal(6)]),
  prefix_length: z.int().min(0).max(128),
  purpose: z.string().describe("primary, additional, ..."),
});

export const instance = z
  .object({
    state: z.enum(INSTANCE_STATES),
    vcpus: z.int(),
    memory_mb: z.int(),
    disk_gb: z.int(),
    os: z.string(),
    rescue_mode: z.boolean().describe("Always false: no provider boots a rescue image yet"),
    ssh_port: z
      .int()
      .optional()
      .describe("Host port forwarded to the machine's SSH port at primary_ip, where SSH is reached that way"),
  })
  .describe("Absent when the machine has not been built or the build failed");

export const capabilities = z
  .object(
    Object.fromEntries(CONTROLS.map((c) => [c, z.boolean()])) as Record<
      (typeof CONTROLS)[number],
      z.ZodBoolean
    >,
  )
  .describe(
    "Which controls the plan allows; a control switched off is refused before the provider is asked. rescue is always false: no provider boots a rescue image yet, and no route asks for one",
  );

/** The machine record of the VPS and dedicated lists (the spec's VPS record); `kind` tells which. */
function machineRecord<K extends string>(kind: K) {
  return z.object({
    id: z.uuid(),
    name: z.string(),
    hostname: z.string(),
    status: z.enum(VPS_STATUSES),
    kind: z.literal(kind),
    provider: z.string(),
    // Billing always sends both for a service; a record without them would break the contract.
    product: productRef,
    billing: billingTerms,
    cancellation: cancellation.nullable(),
    location: z.string(),
    primary_ip: z.string().describe("Empty until the machine has an address"),
    ip_addresses: z.array(ipAddress),
    instance: instance.optional(),
    created_at: z.iso.datetime(),
  });
}

export const vpsRecord = machineRecord("vps");
/** The detail adds `capabilities`. */
export const vpsDetail = vpsRecord.extend({ capabilities });
export const dedicatedRecord = machineRecord("dedicated");
export const dedicatedDetail = dedicatedRecord.extend({ capabilities });

/** GET /vps/{id}/ips and /dedicated/{id}/ips: the authoritative address list. */
export const addressList = z.object({ primary_ip: z.string(), ip_addresses: z.array(ipAddress) });

/** Figures of GET /vps/{id}/stats, /dedicated/{id}/stats and /services/{id}/stats. */
/** The spans of usage history ?range= takes; compute keeps a tier of buckets for each. */
export const USAGE_RANGES = ["1h", "24h", "7d", "30d"] as const;

/** ?range on the stats routes: absent answers the live figures alone, as before. */
export const usageRangeQuery = z.object({
  range: z.enum(USAGE_RANGES, { error: `must be one of ${USAGE_RANGES.join(", ")}` }).optional(),
});

/** The averages of the readings compute took in one step. */
export const usagePoint = z.object({
  at: z.iso.datetime().describe("The step's start"),
  samples: z.int().min(1).describe("How many readings the averages are of"),
  cpu_percent: z.number().min(0).max(100),
  memory_used_mb: z.number().min(0),
  memory_total_mb: z.int(),
  disk_used_gb: z.number().min(0),
  disk_total_gb: z.int(),
  network_rx_bytes_per_second: z
    .number()
    .min(0)
    .nullable()
    .describe("null when the step had no two successive counter readings"),
  network_tx_bytes_per_second: z.number().min(0).nullable(),
});

export const usageHistory = z
  .object({
    range: z.enum(USAGE_RANGES),
    step_seconds: z.int().describe("1h: 60, 24h: 300, 7d: 1800, 30d: 7200"),
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    points: z
      .array(usagePoint)
      .max(361)
      .describe("Oldest first; at most the range in steps plus one. A step without readings has no point."),
  })
  .describe("Usage history over ?range=, from buckets compute downsamples and keeps bounded");

export const machineStats = z.object({
  cpu: z.object({ vcpus: z.int(), usage_percent: z.number().min(0).max(100) }),
  memory: z.object({ total_mb: z.int(), used_mb: z.int() }),
  disk: z.object({ total_gb: z.int(), used_gb: z.int() }),
  network: z.object({ rx_bytes: z.int(), tx_bytes: z.int() }),
  state: z.enum(INSTANCE_STATES),
  history: usageHistory.optional().describe("Only when ?range= is given"),
});

export const osImages = z.object({
  images: z
    .array(z.object({ id: z.string(), name: z.string() }))
    .describe("Empty when no image is enabled for the plan"),
});

export const powerStatus = z.object({
  state: z.enum([...INSTANCE_STATES, "absent"]).describe("absent: the machine has not been built"),
  power: z.enum(POWER_STATE_WORDS),
});

export const traffic = z.object({
  period: z
    .string()
    .regex(/^\d{4}-\d{2}$/)
    .describe("The calendar month counted, YYYY-MM"),
  rx_bytes: z.int(),
  tx_bytes: z.int(),
});

export const provisionStatus = z.object({
  state: z.enum(INSTANCE_STATES),
  job: z
    .object({
      action: z.enum(["build", "reinstall"]),
      status: z.enum(JOB_STATUS_WORDS),
      progress: z.int().min(0).max(100),
    })
    .nullable()
    .describe("The latest build or reinstall; null when there has been none"),
});

const ips = [
  { address: "203.0.113.17", version: 4 as const, prefix_length: 24, purpose: "primary" },
  { address: "2001:db8:5c::a1", version: 6 as const, prefix_length: 64, purpose: "primary" },
];
const capabilitiesExample = {
  power: true,
  reinstall: true,
  password: true,
  snapshots: true,
  backups: true,
  rescue: false,
};
const recordExample = (kind: "vps" | "dedicated") => ({
  id: "0193a5c2-7d1e-7c4a-9f3b-2e8d6a1b4c5d",
  name: kind === "vps" ? "VPS M" : "Dedicated E-2388G",
  hostname: kind === "vps" ? "web-1.example.com" : "db-1.example.com",
  status: "active" as const,
  kind,
  provider: "simulator",
  product: { id: "0193a5c0-1a2b-7c3d-8e4f-5a6b7c8d9e0f", name: kind === "vps" ? "VPS M" : "E-2388G" },
  billing: {
    cycle: "monthly",
    amount: "12.0000",
    currency: "EUR",
    next_due_date: "2026-12-23T10:00:00.000Z",
  },
  cancellation: null,
  location: "fra1",
  primary_ip: "203.0.113.17",
  ip_addresses: ips,
  instance: {
    state: "running" as const,
    vcpus: 2,
    memory_mb: 4096,
    disk_gb: 80,
    os: "ubuntu-24.04",
    rescue_mode: false,
  },
  created_at: "2026-11-23T10:00:00.000Z",
});

export const examples = {
  vpsList: [recordExample("vps")],
  vpsDetail: { ...recordExample("vps"), capabilities: capabilitiesExample },
  dedicatedList: [recordExample("dedicated")],
  dedicatedDetail: {
    ...recordExample("dedicated"),
    capabilities: { ...capabilitiesExample, snapshots: false },
  },
  pagination: paginationExample,
  addressList: { primary_ip: "203.0.113.17", ip_addresses: ips },
  stats: {
    cpu: { vcpus: 2, usage_percent: 37 },
    memory: { total_mb: 4096, used_mb: 1830 },
    disk: { total_gb: 80, used_gb: 21 },
    network: { rx_bytes: 1843200412, tx_bytes: 392011876 },
    state: "running" as const,
  },
  statsHistory: {
    cpu: { vcpus: 2, usage_percent: 37 },
    memory: { total_mb: 4096, used_mb: 1830 },
    disk: { total_gb: 80, used_gb: 21 },
    network: { rx_bytes: 1843200412, tx_bytes: 392011876 },
    state: "running" as const,
    history: {
      range: "1h" as const,
      step_seconds: 60,
      from: "2026-11-23T09:00:30.000Z",
      to: "2026-11-23T10:00:30.000Z",
      points: [
        {
          at: "2026-11-23T09:59:00.000Z",
          samples: 1,
          cpu_percent: 35,
          memory_used_mb: 1822,
          memory_total_mb: 4096,
          disk_used_gb: 21,
          disk_total_gb: 80,
          network_rx_bytes_per_second: 125000,
          network_tx_bytes_per_second: 31250,
        },
        {
          at: "2026-11-23T10:00:00.000Z",
          samples: 1,
          cpu_percent: 37,
          memory_used_mb: 1830,
          memory_total_mb: 4096,
          disk_used_gb: 21,
          disk_total_gb: 80,
          network_rx_bytes_per_second: 131072,
          network_tx_bytes_per_second: 30000,
        },
      ],
    },
  },
  osImages: {
    images: [
      { id: "ubuntu-24.04", name: "ubuntu-24.04" },
      { id: "debian-12", name: "debian-12" },
    ],
  },
  powerStatus: { state: "running" as const, power: "on" as const },
  traffic: { period: "2026-11", rx_bytes: 1843200412, tx_bytes: 392011876 },
  provisionStatus: {
    state: "creating" as const,
    job: { action: "reinstall" as const, status: "running" as const, progress: 40 },
  },
  capabilities: capabilitiesExample,
};

/** DELETE /vps/{id}: the VPS's billing state and cancellation after the call. */
export const vpsCancelled = vpsRecord.pick({ id: true, status: true, cancellation: true });
export const vpsCancelledExample = {
  id: "0193a5c2-7d1e-7c4a-9f3b-2e8d6a1b4c5d",
  status: "active" as const,
  cancellation: {
    type: "end_of_term",
    reason: "Moving to a larger plan",
    requested_at: "2026-11-23T10:00:00.000Z",
    effective_at: "2026-12-23T10:00:00.000Z",
  },
};
