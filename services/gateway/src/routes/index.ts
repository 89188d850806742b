import type { RouteDef } from "../route.ts";
import { metaRoutes } from "./meta.ts";

/**
 * The whole route table. Each route group lives in its own file and is added here.
 */
export function allRoutes(publicUrl: string): RouteDef[] {
  const table: RouteDef[] = [];
  table.push(...metaRoutes(() => table, publicUrl));
  return table;
}
