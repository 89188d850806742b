import type { Router } from "express";
import { documentRoutes } from "./documents.ts";
import type { Kit } from "./kit.ts";
import { orderRoutes } from "./orders.ts";

/** The billing pages: documents and the balance (documents.ts), orders (orders.ts). */
export function billingRoutes(kit: Kit, router: Router): void {
  documentRoutes(kit, router);
  orderRoutes(kit, router);
}
