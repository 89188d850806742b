import { z } from "zod";
import { currency, cycle, decimal4 } from "./money.ts";

/** The catalogue's product record. */
export const product = z.object({
  id: z.uuid(),
  name: z.string(),
  kind: z.string(),
  description: z.string(),
  currency,
  specs: z.object({
    vcpus: z.int(),
    memory_mb: z.int(),
    disk_gb: z.int(),
    location: z.string(),
  }),
  billing_cycles: z.array(z.object({ cycle, price: decimal4, amount: z.number() })),
  hourly: z
    .object({ minimum_credit: z.number() })
    .optional()
    .meta({ description: "present when the product is offered hourly" }),
});

/** GET /products/{id}: what an order will accept. */
export const productDetail = product.extend({
  os_images: z.array(z.object({ id: z.string(), name: z.string() })),
  options: z.array(
    z.object({
      id: z.uuid(),
      name: z.string(),
      recurring_monthly: z.number().nullable(),
      one_time: z.number().nullable(),
    }),
  ),
});

export const productList = z.object({ products: z.array(product) });

const productExample = {
  id: "0195e39f-1a2b-7c3d-8e4f-5a6b7c8d9e01",
  name: "VPS Small",
  kind: "vps",
  description: "2 vCPU, 4 GB RAM, 80 GB NVMe",
  currency: "EUR",
  specs: { vcpus: 2, memory_mb: 4096, disk_gb: 80, location: "fra1" },
  billing_cycles: [
    { cycle: "monthly", price: "12.5000", amount: 12.5 },
    { cycle: "annually", price: "135.0000", amount: 135 },
  ],
};

export const productListExample = { products: [productExample] };

export const productDetailExample = {
  ...productExample,
  os_images: [{ id: "debian-12", name: "debian-12" }],
  options: [
    { id: "0195e39f-3c4d-7e5f-8a6b-7c8d9e0f1a2b", name: "Extra IPv4", recurring_monthly: 2, one_time: null },
  ],
};
