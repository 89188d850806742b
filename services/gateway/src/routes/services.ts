import { PAGE_SIZE } from "@hb/platform/paging";
import { z } from "zod";
import { cooldowns } from "../cooldowns.ts";
import { required } from "../mappers/contract.ts";
import { serviceStatusWords } from "../mappers/enums.ts";
import { invoiceJson } from "../mappers/invoice.ts";
import { serviceMachineJson } from "../mappers/machine.ts";
import { serviceRecordJson, serviceStatsJson, serviceSummaryJson } from "../mappers/service.ts";
import { route } from "../route.ts";
import { idParam, pageQuery, pagination } from "../schemas.ts";
import { invoice, invoiceExample } from "../wire/invoice.ts";
import {
  serviceDetail,
  serviceDetailExample,
  serviceList,
  serviceListExample,
  serviceStatus,
  serviceSummary,
  serviceSummaryExample,
} from "../wire/service.ts";

const id = z.object({ id: idParam });

export const serviceRoutes = [
  route({
    method: "get",
    path: "/services",
    tag: "Services",
    summary: "Every service the customer owns, all kinds (pagination and stats inside data)",
    auth: { scope: "read", permissions: ["view_services"] },
    query: pageQuery(PAGE_SIZE.default).extend({ status: serviceStatus.optional() }),
    response: serviceList,
    example: serviceListExample,
    handler: async ({ clients, caller, query }) => {
      const [list, stats] = await Promise.all([
        clients.billing.listServiceSummaries({
          caller,
          status: serviceStatusWords.value(query.status) ?? 0,
          page: query.page,
          limit: query.limit,
        }),
        clients.billing.getServiceStats({ caller }),
      ]);
      return {
        data: {
          services: list.services.map(serviceSummaryJson),
          pagination: pagination(query.page, query.limit, list.total),
          stats: serviceStatsJson(stats),
        },
      };
    },
  }),
  route({
    method: "get",
    path: "/services/:id",
    tag: "Services",
    summary: "One service with type-specific detail",
    auth: { scope: "read", permissions: ["view_services"] },
    params: id,
    response: serviceDetail,
    example: serviceDetailExample,
    handler: async ({ clients, caller, params }) => {
      // Billing and compute together, as GET /vps/{id} does. A service without a machine gets an
      // empty list from compute; a compute failure is the API's 503, never read as "no machine".
      const [{ service }, { machines }] = await Promise.all([
        clients.billing.getService({ caller, serviceId: params.id }),
        clients.compute.describeMachines({ caller, serviceIds: [params.id] }),
      ]);
      const machine = machines[0];
      return {
        data: {
          ...serviceRecordJson(service!),
          machine: serviceMachineJson(machine),
        },
      };
    },
  }),
  route({
    method: "post",
    path: "/services/:id/cancel",
    tag: "Services",
    summary: "Cancel at the end of the term, or immediately (terminates now and destroys the disks)",
    auth: { scope: "destructive", permissions: ["cancel_services"] },
    errors: ["CONFLICT"],
    params: id,
    response: serviceSummary,
    responseExtra: { message: z.string() },
    exampleExtra: { message: "Cancellation scheduled for the end of the term" },
    example: {
      ...serviceSummaryExample,
      cancellation: {
        type: "end_of_term",
        reason: "Moving to another provider",
        requested_at: "2026-11-23T10:00:00.000Z",
        effective_at: "2026-12-23T10:00:00.000Z",
      },
    },
    body: z.object({
      reason: z.string({ error: "must be a string" }).max(1000).default(""),
      immediate: z.boolean({ error: "must be true or false" }).default(false),
    }),
    cooldown: cooldowns.cancel,
    handler: async ({ clients, caller, params, body }) => {
      const { service } = await clients.billing.cancelService({
        caller,
        serviceId: params.id,
        reason: body.reason,
        immediate: body.immediate,
      });
      return {
        data: serviceSummaryJson(service!),
        extra: {
          message: body.immediate
            ? "Service terminated"
            : "Cancellation scheduled for the end of the billing term",
        },
      };
    },
  }),
  route({
    method: "delete",
    path: "/services/:id/cancel",
    tag: "Services",
    summary: "Withdraw a scheduled cancellation",
    auth: { scope: "services", permissions: ["manage_services"] },
    errors: ["CONFLICT"],
    params: id,
    response: serviceSummary,
    responseExtra: { message: z.string() },
    exampleExtra: { message: "Cancellation withdrawn" },
    example: serviceSummaryExample,
    handler: async ({ clients, caller, params }) => {
      const { service } = await clients.billing.withdrawCancellation({ caller, serviceId: params.id });
      return { data: serviceSummaryJson(service!), extra: { message: "Cancellation withdrawn" } };
    },
  }),
  route({
    method: "post",
    path: "/services/:id/renew",
    tag: "Services",
    summary: "Issue the next renewal invoice early (409 while any document is open on the service)",
    auth: { scope: "billing", permissions: ["pay_invoices"] },
    errors: ["CONFLICT"],
    params: id,
    response: z.object({ invoice }),
    responseExtra: { message: z.string() },
    exampleExtra: { message: "Renewal invoice issued" },
    example: { invoice: invoiceExample },
    cooldown: cooldowns.renew,
    handler: async ({ clients, caller, params }) => {
      const { invoice } = await clients.billing.renewService({ caller, serviceId: params.id });
      return {
        data: { invoice: invoiceJson(required(invoice, "renewal invoice")) },
        extra: { message: "Renewal invoice issued" },
      };
    },
  }),
];
