import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Caller, CallerSchema } from "@hb/contracts/platform/v1/error_pb";
import { apiError, badRequest, isUuid } from "@hb/platform";

export interface CallerIds {
  customerId: string;
  personId: string;
}

/** Every customer-facing call must say whom it is for. */
export function callerOf(caller: Caller | MessageInitShape<typeof CallerSchema> | undefined): CallerIds {
  if (!caller?.customerId || !caller.personId) throw apiError("UNAUTHORIZED", "caller missing");
  return { customerId: caller.customerId, personId: caller.personId };
}

export const json = (value: unknown) => ({ result: { json: JSON.stringify(value) } });

export function requireUuid(field: string, value: string): string {
  if (!isUuid(value)) throw badRequest(field, `${field} is not a valid identifier`);
  return value;
}

export function page(p: number, l: number, def = 20) {
  const pageNo = Math.max(1, p || 1);
  const limit = Math.min(200, Math.max(1, l || def));
  return { page: pageNo, limit, offset: (pageNo - 1) * limit };
}

export const pagination = (p: { page: number; limit: number }, total: number) => ({
  page: p.page,
  limit: p.limit,
  total,
  pages: Math.max(1, Math.ceil(total / p.limit)),
});
