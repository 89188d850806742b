/**
 * An internal service calling the platform's backends directly over gRPC, with the generated
 * protobuf-es types: the way a service inside the cluster uses compute or billing (the REST gateway
 * is for customers). Plain gRPC over HTTP/2, so any gRPC client would do; this one uses
 * connect-node's gRPC transport. See docs/internal-api.md for every RPC and message.
 *
 *   BILLING_ADDR=127.0.0.1:50053 COMPUTE_ADDR=127.0.0.1:50052 \
 *     node examples/internal-client.ts <customerId> <personId>
 */

import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { BillingService } from "@hb/contracts/hb/billing/v1/billing_pb";
import { ProductKind, ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { ComputeService } from "@hb/contracts/hb/compute/v1/compute_pb";
import { InstanceState } from "@hb/contracts/hb/compute/v1/machines_pb";
import { ErrorInfoSchema } from "@hb/contracts/hb/platform/v1/error_pb";
import { PAGE_SIZE } from "@hb/platform/paging";

const transport = (addr: string) => createGrpcTransport({ baseUrl: `http://${addr}` });
const billing = createClient(BillingService, transport(process.env.BILLING_ADDR ?? "127.0.0.1:50053"));
const compute = createClient(ComputeService, transport(process.env.COMPUTE_ADDR ?? "127.0.0.1:50052"));

const [customerId, personId] = process.argv.slice(2);
if (!customerId || !personId) {
  console.error("usage: node examples/internal-client.ts <customerId> <personId>");
  process.exit(2);
}
// Calls made for a customer say whom they are for; backends scope every query by it.
const caller = { customerId, personId };

try {
  const account = await billing.getAccount({ caller }, { timeoutMs: 5_000 });
  console.log(`credit balance: ${account.balance?.amount} ${account.balance?.currency}`);

  // One page of the customer's VPS from billing, then their machines from compute in one call.
  const page = await billing.listServiceSummaries({
    caller,
    kind: ProductKind.VPS,
    page: 1,
    limit: PAGE_SIZE.default,
  });
  const machines = await compute.describeMachines({ caller, serviceIds: page.services.map((s) => s.id) });
  for (const s of page.services) {
    const m = machines.machines.find((x) => x.serviceId === s.id);
    const state = m?.instance ? InstanceState[m.instance.state].toLowerCase() : "not built";
    console.log(`${s.id} ${s.hostname} billing=${ServiceStatus[s.status]} machine=${state}`);
  }
} catch (err) {
  // The spec's machine code travels beside the gRPC status as an ErrorInfo: a Connect error detail
  // (connect-node servers) or the binary trailer hb-error-bin (grpc-js servers, the default).
  const e = ConnectError.from(err);
  const trailer = e.metadata.get("hb-error-bin");
  const info =
    e.findDetails(ErrorInfoSchema)[0] ??
    (trailer ? fromBinary(ErrorInfoSchema, Buffer.from(trailer, "base64")) : undefined);
  console.error(`refused: ${Code[e.code]} ${info?.code ?? ""} ${e.rawMessage}`);
  process.exit(1);
}
