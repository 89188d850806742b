import { z } from "zod";

/**
 * The spec's pagination object: page, limit, total and the page count (named pages). Beside data
 * on the VPS and dedicated lists, inside it on services, invoices, proformas, orders and
 * transactions.
 */
export const pagination = z.object({
  page: z.int().min(1),
  limit: z.int().min(1),
  total: z.int().min(0),
  pages: z.int().min(1).describe("Page count; at least 1 even when the list is empty"),
});

export const paginationExample = { page: 1, limit: 20, total: 1, pages: 1 };
