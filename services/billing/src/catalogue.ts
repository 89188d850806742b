import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { badRequest, newId, notFound, type Sql } from "@hb/platform";
import { formatMoney, isCycle, money, parseMoney, toNumber } from "./money.ts";
import { json, requireUuid, transact } from "./shared.ts";

interface ProductRow {
  id: string;
  name: string;
  kind: string;
  description: string;
  currency: string;
  vcpus: number;
  memory_mb: number;
  disk_gb: number;
  location: string;
  os_images: string[];
  min_credit: string;
  prices: { cycle: string; price: string }[];
  options: { id: string; name: string; recurring_price: string | null; one_time_price: string | null }[];
}

const productJson = (p: ProductRow, detail: boolean) => ({
  id: p.id,
  name: p.name,
  kind: p.kind,
  description: p.description,
  currency: p.currency,
  specs: { vcpus: p.vcpus, memory_mb: p.memory_mb, disk_gb: p.disk_gb, location: p.location },
  billing_cycles: p.prices.map((c) => ({
    cycle: c.cycle,
    price: formatMoney(money(c.price)),
    amount: toNumber(money(c.price)),
  })),
  ...(p.prices.some((c) => c.cycle === "hourly")
    ? { hourly: { minimum_credit: toNumber(money(p.min_credit)) } }
    : {}),
  ...(detail
    ? {
        os_images: p.os_images.map((id) => ({ id, name: id })),
        options: p.options.map((o) => ({
          id: o.id,
          name: o.name,
          // Recurring add-ons are priced per month; a cycle costs that times its months.
          recurring_monthly: o.recurring_price === null ? null : toNumber(money(o.recurring_price)),
          one_time: o.one_time_price === null ? null : toNumber(money(o.one_time_price)),
        })),
      }
    : {}),
});

const productSelect = `select p.*, coalesce((select json_agg(json_build_object('cycle', cycle, 'price', price::text) order by price)
  from product_prices where product_id = p.id), '[]') as prices,
  coalesce((select json_agg(json_build_object('id', o.id, 'name', o.name, 'recurring_price', o.recurring_price::text,
    'one_time_price', o.one_time_price::text) order by o.name, o.id) from product_options o where o.product_id = p.id), '[]') as options
  from products p`;

export function createCatalogue(sql: Sql): Partial<ServiceImpl<typeof BillingService>> {
  return {
    async listProducts() {
      const rows = await sql.unsafe<ProductRow[]>(`${productSelect} where p.active order by p.kind, p.name`);
      return json({ products: rows.map((p) => productJson(p, false)) });
    },

    async getProduct(req) {
      const [p] = await sql.unsafe<ProductRow[]>(`${productSelect} where p.id = $1 and p.active`, [
        requireUuid("id", req.productId),
      ]);
      if (!p) throw notFound("Product");
      return json(productJson(p, true));
    },

    async adminCreateProduct(req) {
      if (!req.name.trim()) throw badRequest("name", "name is required");
      const entries = Object.entries(req.prices);
      if (entries.length === 0)
        throw badRequest("prices", "at least one cycle price is required, e.g. monthly=10");
      for (const [cycle, price] of entries) {
        if (!isCycle(cycle)) throw badRequest("prices", `unknown cycle "${cycle}"`);
        const v = parseMoney(price);
        if (v === undefined || v < 0n) throw badRequest("prices", `bad price "${price}" for ${cycle}`);
      }
      const id = newId();
      await transact(sql, async (tx) => {
        await tx`insert into products (id, name, kind, currency, vcpus, memory_mb, disk_gb, location, os_images, min_credit)
          values (${id}, ${req.name.trim()}, ${req.kind || "vps"}, ${req.currency || "EUR"}, ${req.vcpus}, ${req.memoryMb},
                  ${req.diskGb}, ${req.location}, ${req.osImages}, ${formatMoney(parseMoney(req.minCredit || "0") ?? 0n)})`;
        for (const [cycle, price] of entries) {
          await tx`insert into product_prices (product_id, cycle, price) values (${id}, ${cycle}, ${formatMoney(money(price))})`;
        }
      });
      const [p] = await sql.unsafe<ProductRow[]>(`${productSelect} where p.id = $1`, [id]);
      return { product: { json: JSON.stringify(productJson(p, true)) } };
    },
  };
}
