/**
 * The spec's page sizes (Limits, "Page size"), the one home of the numbers: ?page starts at 1;
 * ?limit defaults to 20 for services, invoices, proformas, orders and credit transactions and to
 * 50 for the VPS and dedicated-server lists; a larger ?limit than 200 is silently reduced to 200.
 * `staff` is the admin panel's own lists (request logs, bank transfers, partners), not in the spec.
 * The gateway reads list queries with them and the backends page with them (the contracts' own
 * `lte: 200` bounds say the same to protovalidate).
 */
export const PAGE_SIZE = { default: 20, machines: 50, max: 200, staff: 50 } as const;

/** The highest ?page accepted (documented in the OpenAPI schema); beyond it is 400, not an overflow. */
export const MAX_PAGE = 1_000_000;

/** One page of a list: its number (from 1), its size and the rows before it. */
export interface PageWindow {
  page: number;
  limit: number;
  offset: number;
}

/**
 * The page a list request asks for. The contracts' zero means unset: page 0 is the first, limit 0
 * the list's default; a limit above the spec's maximum is reduced to it, as at the edge.
 */
export function pageWindow(
  page: number,
  limit: number,
  defaultLimit: number = PAGE_SIZE.default,
): PageWindow {
  const pageNo = Math.max(page, 0) || 1;
  const size = Math.min(Math.max(limit, 0) || defaultLimit, PAGE_SIZE.max);
  return { page: pageNo, limit: size, offset: (pageNo - 1) * size };
}
