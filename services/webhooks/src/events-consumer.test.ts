import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { EventSchema, OrderStatus, PaymentMode } from "@hb/contracts/hb/events/v1/events_pb";
import { eventData } from "./events-consumer.ts";

// The `data` partners receive is the spec's wire shape. The events between services are typed
// (enums, Money, Timestamp); these are the exact JSON texts partners got when the events carried
// words and decimal strings, so typing the events changed nothing a partner sees.

const event = (init: Parameters<typeof create<typeof EventSchema>>[1]) =>
  create(EventSchema, { id: "0195e3a4-5c6d-7e7f-8a9b-0c1d2e3f4a5b", occurredAt: timestampNow(), ...init });

describe("webhook data of typed events", () => {
  it("spells an order event's status and payment mode as words and its amount as a JSON number", () => {
    const paid = event({
      type: "order.paid",
      partnerId: "p",
      payload: {
        case: "order",
        value: {
          orderId: "o-1",
          orderNumber: "ORD-5120",
          externalOrderId: "ext-42",
          externalCustomerId: "",
          status: OrderStatus.ACTIVE,
          paymentMode: PaymentMode.CREDIT,
          amount: { currency: "EUR", amount: "10.5000" },
          invoiceId: "i-1",
        },
      },
    });
    assert.equal(
      JSON.stringify(eventData(paid)),
      '{"orderId":"o-1","orderNumber":"ORD-5120","externalOrderId":"ext-42","externalCustomerId":null,' +
        '"status":"active","paymentMode":"credit","amount":10.5,"invoiceId":"i-1"}',
    );
    const invoiced = event({
      type: "order.invoiced",
      payload: {
        case: "order",
        value: {
          orderId: "o-2",
          orderNumber: "ORD-5121",
          status: OrderStatus.PENDING,
          paymentMode: PaymentMode.INVOICE,
          paymentError: "Insufficient credit",
          services: [
            { serviceId: "s-1", status: ServiceStatus.PENDING_PAYMENT, hostname: "h", serverIp: "" },
          ],
        },
      },
    });
    assert.equal(
      JSON.stringify(eventData(invoiced)),
      '{"orderId":"o-2","orderNumber":"ORD-5121","externalOrderId":null,"externalCustomerId":null,' +
        '"status":"pending","paymentMode":"invoice","paymentError":"Insufficient credit",' +
        '"services":[{"serviceId":"s-1","status":"pending_payment","hostname":"h","serverIp":""}]}',
    );
  });

  it("spells a service event's status as the spec's word", () => {
    const failed = event({
      type: "service.provisioning_failed",
      payload: {
        case: "service",
        value: {
          serviceId: "s-2",
          orderId: "o-3",
          status: ServiceStatus.PROVISIONING_FAILED,
          hostname: "web-2",
          reason: "no capacity",
        },
      },
    });
    assert.equal(
      JSON.stringify(eventData(failed)),
      '{"serviceId":"s-2","orderId":"o-3","externalOrderId":null,"externalCustomerId":null,' +
        '"status":"provisioning_failed","serverIp":null,"hostname":"web-2","reason":"no capacity"}',
    );
  });
});
