import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CatalogueProductSchema } from "@hb/contracts/hb/billing/v1/products_pb";
import type { Money } from "@hb/contracts/hb/platform/v1/money_pb";
import { badRequest, billingCurrency, newId, notFound, prepared, type Sql } from "@hb/platform";
import { clock } from "./clock.ts";
import { moneyOut } from "./contract-values.ts";
import { billingCycle, productKind } from "./enums.ts";
import type { BillingHandlers } from "./handlers.ts";
import { formatMoney, money, requestedMoney, type Units } from "./money.ts";
import { transact } from "./shared.ts";

/** An admin-given price: exact, not negative, in the product's currency. */
export function priceIn(m: Money | undefined, field: string, currency: string): Units | undefined {
  if (!m) return undefined;
  const v = requestedMoney(m.amount, field);
  if (v < 0n) throw badRequest(field, `${field} must not be negative`);
  if (m.currency && m.currency !== currency)
    throw badRequest(field, `prices must be in the product's currency ${currency}, not ${m.currency}`);
  return v;
}

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

/** A catalogue row as the contract's product; prices in the product's currency. */
function productOut(p: ProductRow): MessageInitShape<typeof CatalogueProductSchema> {
  const price = (text: string) => moneyOut(money(text), p.currency);
  return {
    id: p.id,
    name: p.name,
    kind: productKind.out(p.kind),
    description: p.description,
    currency: p.currency,
    specs: { vcpus: p.vcpus, memoryMb: p.memory_mb, diskGb: p.disk_gb, location: p.location },
    prices: p.prices.map((c) => ({ cycle: billingCycle.out(c.cycle), price: price(c.price) })),
    minimumCredit: price(p.min_credit),
    osImages: p.os_images,
    options: p.options.map((o) => ({
      id: o.id,
      name: o.name,
      recurringMonthlyPrice: o.recurring_price === null ? undefined : price(o.recurring_price),
      oneTimePrice: o.one_time_price === null ? undefined : price(o.one_time_price),
    })),
  };
}

const productSelect = `select p.*, coalesce((select json_agg(json_build_object('cycle', cycle, 'price', price::text) order by price)
  from product_prices where product_id = p.id), '[]') as prices,
  coalesce((select json_agg(json_build_object('id', o.id, 'name', o.name, 'recurring_price', o.recurring_price::text,
    'one_time_price', o.one_time_price::text) order by o.name, o.id) from product_options o where o.product_id = p.id), '[]') as options
  from products p`;

export function createCatalogue(sql: Sql): BillingHandlers {
  return {
    async listProducts() {
      const rows = await sql.unsafe<ProductRow[]>(`${productSelect} where p.active order by p.kind, p.name`);
      return { products: rows.map(productOut) };
    },

    async getProduct(req) {
      const [p] = await sql.unsafe<ProductRow[]>(
        `${productSelect} where p.id = $1 and p.active`,
        [req.productId],
        prepared,
      );
      if (!p) throw notFound("Product");
      return { product: productOut(p) };
    },

    async adminCreateProduct(req) {
      if (req.prices.length === 0)
        throw badRequest("prices", "at least one cycle price is required, e.g. monthly=10");
      const currency = req.currency ? billingCurrency("currency", req.currency) : "EUR";
      const prices = new Map<string, Units>();
      for (const p of req.prices) {
        const cycle = billingCycle.in(p.cycle);
        if (cycle === undefined || cycle === "one_time") throw badRequest("prices", "unknown cycle");
        if (prices.has(cycle)) throw badRequest("prices", `two prices for ${cycle}`);
        const v = priceIn(p.price, "prices", currency);
        if (v === undefined) throw badRequest("prices", `no price for ${cycle}`);
        prices.set(cycle, v);
      }
      // The contract refuses a kind it does not define; unspecified is a VPS.
      const kind = productKind.in(req.kind) ?? "vps";
      const minCredit = priceIn(req.minimumCredit, "minimum_credit", currency) ?? 0n;
      const id = newId();
      await transact(sql, async (tx) => {
        await tx`insert into products (id, name, kind, currency, vcpus, memory_mb, disk_gb, location, os_images, min_credit, created_at)
          values (${id}, ${req.name.trim()}, ${kind}, ${currency}, ${req.vcpus}, ${req.memoryMb},
                  ${req.diskGb}, ${req.location}, ${req.osImages}, ${formatMoney(minCredit)}, ${clock.now()})`;
        for (const [cycle, price] of prices) {
          await tx`insert into product_prices (product_id, cycle, price) values (${id}, ${cycle}, ${formatMoney(price)})`;
        }
      });
      const [p] = await sql.unsafe<ProductRow[]>(`${productSelect} where p.id = $1`, [id], prepared);
      return { product: productOut(p) };
    },
  };
}
