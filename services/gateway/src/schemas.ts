import { z } from "zod";

/** Shared input schemas, so every route validates ids and paging the same way. */
export const idParam = z.uuid({ error: "is not a valid identifier" });

export const MAX_PAGE_SIZE = 200;

/** ?page from 1, ?limit above 200 silently reduced to 200. */
export function pageQuery(defaultLimit: number) {
  return z.object({
    page: z.coerce
      .number({ error: "must be a whole number" })
      .int({ error: "must be a whole number" })
      .min(1, { error: "must be 1 or more" })
      .default(1),
    limit: z.coerce
      .number({ error: "must be a whole number" })
      .int({ error: "must be a whole number" })
      .min(1, { error: "must be 1 or more" })
      .default(defaultLimit)
      .transform((n) => Math.min(n, MAX_PAGE_SIZE)),
  });
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
}

export const pagination = (page: number, limit: number, total: number): Pagination => ({
  page,
  limit,
  total,
  pages: Math.max(1, Math.ceil(total / limit)),
});

export const password = z
  .string({ error: "must be a string" })
  .min(8, { error: "must be at least 8 characters" })
  .max(128, { error: "must be at most 128 characters" });
