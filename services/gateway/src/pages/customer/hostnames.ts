/**
 * The hostnames of an order line the portal orders several times (issue 29 §3: "web" × 3 is
 * web-1, web-2, web-3, not three machines called web). The API has no quantity: the portal sends
 * one item per machine, and each item's hostname is what the API's spec says it is, the name the
 * item carries, so the numbering is the portal's, made before the items are sent. An API client
 * that sends the same name twice gets it twice, as it asked. The number goes on the first label
 * (web.example.com × 2 is web-1.example.com, web-2.example.com), so the domain stays the one
 * typed. Without a hostname billing names each machine itself (kind and id, already distinct).
 */
export function numberedHostnames(hostname: string, quantity: number): string[] {
  if (!hostname || quantity === 1) return Array.from({ length: quantity }, () => hostname);
  const dot = hostname.indexOf(".");
  const [first, rest] = dot < 0 ? [hostname, ""] : [hostname.slice(0, dot), hostname.slice(dot)];
  return Array.from({ length: quantity }, (_, i) => `${first}-${i + 1}${rest}`);
}
