import type { ResellerService } from "@hb/contracts/hb/billing/v1/services_pb";
import type { z } from "zod";
import type { resellerService, resellerServiceState } from "../wire/reseller.ts";
import { serviceStatusWords } from "./enums.ts";

/** A service the partner holds, with the partner's own order and customer ids. */
export function resellerServiceJson(r: ResellerService): z.infer<typeof resellerService> {
  const s = r.service!;
  return {
    id: s.id,
    order_id: s.orderId ?? null,
    external_order_id: r.externalOrderId ?? null,
    external_customer_id: r.externalCustomerId ?? null,
    status: serviceStatusWords.wire(s.status),
    hostname: s.hostname,
    address: r.address ?? null,
    product: { id: s.product?.id ?? "", name: s.product?.name ?? "" },
    failure_reason: s.failureReason ?? null,
  };
}

/** A partner's suspend, unsuspend or terminate: the service's new state. */
export function resellerServiceStateJson(r: ResellerService): z.infer<typeof resellerServiceState> {
  const { id, status, hostname, address } = resellerServiceJson(r);
  return { id, status, hostname, address };
}
