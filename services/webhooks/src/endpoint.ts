import { lookup } from "node:dns/promises";
import { badRequest } from "@hb/platform";
import ipaddr from "ipaddr.js";
import { isBlockedAddress } from "./address-policy.ts";

/**
 * Checks a webhook URL when it is saved: explicit http(s) scheme, a host, and no loopback or
 * private address (literal, or what the name resolves to now). A name that does not resolve yet
 * is accepted: it is resolved again, and checked, at every delivery.
 */
export async function checkWebhookUrl(raw: string, allowLoopback: boolean): Promise<string> {
  const text = raw.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badRequest(
      "webhookUrl",
      "webhookUrl must be an absolute URL with an explicit http or https scheme",
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw badRequest("webhookUrl", "webhookUrl must use the http or https scheme");
  }
  if (url.username || url.password) throw badRequest("webhookUrl", "webhookUrl must not carry credentials");
  if (text.length > 2000) throw badRequest("webhookUrl", "webhookUrl must be at most 2000 characters");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(host)) {
    if (isBlockedAddress(host, allowLoopback)) {
      throw badRequest(
        "webhookUrl",
        "webhookUrl must point to a public host, not a loopback, private or reserved address",
      );
    }
    return url.toString();
  }
  if (!/\./.test(host) || /(^|\.)localhost$/i.test(host) || /\.(local|internal|localdomain)$/i.test(host)) {
    if (!(allowLoopback && /(^|\.)localhost$/i.test(host))) {
      throw badRequest("webhookUrl", "webhookUrl must point to a public host name");
    }
  }
  const addresses = await lookup(host, { all: true, verbatim: true }).catch(() => []);
  if (addresses.some((a) => isBlockedAddress(a.address, allowLoopback))) {
    throw badRequest("webhookUrl", "webhookUrl resolves to a loopback, private or reserved address");
  }
  return url.toString();
}
