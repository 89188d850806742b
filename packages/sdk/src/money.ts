import { moneyMovingOperations } from "./gen/operations.ts";

export type MoneyOperation = (typeof moneyMovingOperations)[number];

const patterns = moneyMovingOperations.map((op) => {
  const [method, template] = op.split(" ");
  const source = template.replace(/\{[^}]+\}/g, "([^/]+)");
  return { op, method, re: new RegExp(`^${source}$`) };
});

/** The money-moving operation a request is, from its method and its path under /api/v1. */
export function moneyOperationOf(
  method: string,
  path: string,
): { op: MoneyOperation; id?: string } | undefined {
  for (const p of patterns) {
    if (p.method !== method.toUpperCase()) continue;
    const m = p.re.exec(path);
    if (m) return { op: p.op, id: m[1] === undefined ? undefined : decodeURIComponent(m[1]) };
  }
  return undefined;
}

/**
 * The read that shows whether a money-moving call took effect (spec, Errors: "re-read the order,
 * document or balance first and retry only if nothing was applied"), and the part of its answer
 * that changes when it did. Reseller orders have none: they are signed requests, which the SDK
 * does not make, so they are never retried.
 */
export function reReadOf(
  op: MoneyOperation,
  id: string | undefined,
): { path: string; fingerprint: (data: unknown) => string } | undefined {
  const whole = (data: unknown) => JSON.stringify(data);
  const svc = encodeURIComponent(id ?? "");
  switch (op) {
    case "POST /orders":
      // The newest order and the count: a new order changes both.
      return { path: "/orders?limit=1", fingerprint: whole };
    case "POST /invoices/{id}/pay":
      return { path: `/invoices/${svc}`, fingerprint: whole };
    case "POST /proformas/{id}/pay":
      return { path: `/proformas/${svc}`, fingerprint: whole };
    case "POST /services/{id}/options":
      return { path: `/services/${svc}/options`, fingerprint: whole };
    case "POST /services/{id}/upgrades":
    case "POST /services/{id}/upgrades/options":
      // Only the pending upgrade: the previews' prorated prices move with the clock.
      return {
        path: `/services/${svc}/upgrades`,
        fingerprint: (data) =>
          JSON.stringify((data as { pending_upgrade?: unknown }).pending_upgrade ?? null),
      };
    case "POST /reseller/orders":
      return undefined;
  }
}
