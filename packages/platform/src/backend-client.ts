import type { DescService } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { type ClientHandle, type ClientOptions, rpcClient } from "./rpc-client.ts";
import type { Transport } from "./rpc-wire.ts";

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The methods of every listed service definition in one object. */
export type BackendClient<D extends readonly DescService[]> = Intersection<
  { [K in keyof D]: D[K] extends DescService ? Client<D[K]> : never }[number]
>;

/**
 * One client for several service definitions of one backend (its customer-facing, staff and
 * service-to-service definitions), for callers allowed more than one of them, such as the admin
 * command. Method names are unique within a backend's package, so nothing is shadowed; each call
 * still goes to its own definition and is allowed or refused by it.
 */
export function backendClient<const D extends readonly DescService[]>(
  transport: Transport,
  descs: D,
  address: string,
  opts: ClientOptions,
): { client: BackendClient<D>; close(): void } {
  const handles: ClientHandle<DescService>[] = descs.map((d) => rpcClient(transport, d, address, opts));
  return {
    client: Object.assign({}, ...handles.map((h) => h.client)) as BackendClient<D>,
    close: () => {
      for (const h of handles) h.close();
    },
  };
}
