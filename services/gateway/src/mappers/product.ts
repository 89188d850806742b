import { BillingCycle } from "@hb/contracts/hb/billing/v1/common_pb";
import type { CatalogueProduct } from "@hb/contracts/hb/billing/v1/products_pb";
import type { z } from "zod";
import type { product, productDetail } from "../wire/product.ts";
import { amountNumber, decimal4, required } from "./contract.ts";
import { billingCycleWords, productKindWords } from "./enums.ts";

/** The catalogue's product record (GET /products). */
export function productJson(p: CatalogueProduct): z.infer<typeof product> {
  const specs = required(p.specs, "product specs");
  const hourly = p.prices.some((c) => c.cycle === BillingCycle.HOURLY);
  return {
    id: p.id,
    name: p.name,
    kind: productKindWords.wire(p.kind),
    description: p.description,
    currency: p.currency,
    specs: { vcpus: specs.vcpus, memory_mb: specs.memoryMb, disk_gb: specs.diskGb, location: specs.location },
    billing_cycles: p.prices.map((c) => ({
      cycle: billingCycleWords.wire(c.cycle),
      price: decimal4(c.price),
      amount: amountNumber(c.price),
    })),
    ...(hourly ? { hourly: { minimum_credit: amountNumber(p.minimumCredit) } } : {}),
  };
}

/** GET /products/{id}: the record with what an order may choose. */
export function productDetailJson(p: CatalogueProduct): z.infer<typeof productDetail> {
  return {
    ...productJson(p),
    os_images: p.osImages.map((id) => ({ id, name: id })),
    options: p.options.map((o) => ({
      id: o.id,
      name: o.name,
      recurring_monthly: o.recurringMonthlyPrice ? amountNumber(o.recurringMonthlyPrice) : null,
      one_time: o.oneTimePrice ? amountNumber(o.oneTimePrice) : null,
    })),
  };
}
