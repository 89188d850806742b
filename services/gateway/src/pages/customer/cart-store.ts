import type { Redis } from "@hb/platform/redis";

/** One line of a cart: a product as an order item takes it, and how many of it. */
export interface CartLine {
  productId: string;
  billingCycle: string;
  hostname?: string;
  osImage?: string;
  quantity: number;
  /** Add-ons chosen for each of the line's services (recurring ones by the month). */
  addons?: { optionId: string; billingType: "recurring" | "one_time" }[];
}

/** A cart left alone this long is forgotten (prices are read again when it is shown anyway). */
const CART_SECONDS = 7 * 24 * 3600;

/**
 * A person's cart, kept in Redis between pages (a multi-product order is built over several
 * forms). It holds only what the order form asked; names and prices are the catalogue's, read
 * when the cart is shown, and the order itself is the API's POST /orders with `items`, so the
 * cart never decides a price or a rule. Each change reads and writes the whole (small) list: two
 * tabs changing one cart at the same instant may lose one change, never place anything.
 */
export function cartStore(redis: Redis, ns: string) {
  const key = (customerId: string, personId: string) => `${ns}:portal-cart:${customerId}:${personId}`;
  const read = async (k: string): Promise<CartLine[]> => {
    const raw = await redis.get(k);
    return raw ? (JSON.parse(raw) as CartLine[]) : [];
  };
  const write = async (k: string, lines: CartLine[]) => {
    if (lines.length) await redis.set(k, JSON.stringify(lines), "EX", CART_SECONDS);
    else await redis.del(k);
  };
  return {
    lines: (customerId: string, personId: string) => read(key(customerId, personId)),
    async add(customerId: string, personId: string, line: CartLine): Promise<CartLine[]> {
      const k = key(customerId, personId);
      const lines = [...(await read(k)), line];
      await write(k, lines);
      return lines;
    },
    async remove(customerId: string, personId: string, index: number): Promise<void> {
      const k = key(customerId, personId);
      await write(
        k,
        (await read(k)).filter((_l, n) => n !== index),
      );
    },
    clear: (customerId: string, personId: string) => redis.del(key(customerId, personId)),
  };
}
export type CartStore = ReturnType<typeof cartStore>;
