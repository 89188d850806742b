/** What the machine route files share: the id parameter, the permission sets and the wire's guards. */

import type { ServiceSummary } from "@hb/contracts/hb/billing/v1/services_pb";
import { z } from "zod";
import { serviceSummaryJson } from "../mappers/service.ts";
import { idParam } from "../schemas.ts";
import type { serviceSummary } from "../wire/service.ts";

export type ServiceWire = z.infer<typeof serviceSummary>;

/** Billing's service summary in the wire shape the machine records compose. */
export const serviceWire: (s: ServiceSummary) => ServiceWire = serviceSummaryJson;

export const id = z.object({ id: idParam });
export const viewServices = ["view_services"] as const;
export const powerPerms = ["manage_services", "power_services"] as const;
export const manage = ["manage_services"] as const;

/** A field compute always sets; its absence is a contract violation (500), not a customer error. */
export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`compute answered without ${what}`);
  return value;
}
