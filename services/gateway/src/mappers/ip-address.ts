import type { IpAddress, IpAddresses } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { z } from "zod";
import type { addressList, ipAddress } from "../wire/machine.ts";
import { ipPurposes } from "./compute-wire.ts";

function ipAddressJson(a: IpAddress): z.infer<typeof ipAddress> {
  if (a.version !== 4 && a.version !== 6) throw new Error(`compute sent IP version ${a.version}`);
  return {
    address: a.address,
    version: a.version,
    prefix_length: a.prefixLength,
    purpose: ipPurposes.name(a.purpose),
  };
}

/** GET /vps/{id}/ips, /dedicated/{id}/ips, and the address part of the machine records. */
export function addressListJson(a: IpAddresses | undefined): z.infer<typeof addressList> {
  return { primary_ip: a?.primaryIp ?? "", ip_addresses: (a?.addresses ?? []).map(ipAddressJson) };
}
