/**
 * Words for the reference that belong to a section rather than a route: each OpenAPI tag's
 * description, and the two headers every signed reseller request carries. Kept here, beside the
 * reference page, so the OpenAPI builder only has to look them up.
 */

/** Markdown shown at the top of each section of the reference, keyed by the route table's tag. */
export const tagDescriptions: Record<string, string> = {
  Index:
    "Who the key belongs to, its scopes, the rate-limit counters of the current hour and links to this documentation. A cheap way to check a key.",
  Documentation:
    "This reference, the OpenAPI document it is built from and the Markdown guide. None of these needs a key.",
  Account: "The account that owns the key: profile, credit balance, usage this month and the credit ledger.",
  Services:
    "Every service the account holds, of any kind, with cancellation (at the end of the term or at once) and early renewal.",
  "Service control":
    "Actions on a service whatever its backend: power, reinstall, root password, statistics and provider backups. Power and reinstall are asynchronous: poll the service or its job instead of repeating the call.",
  VPS: "Virtual servers: detail, addresses, statistics, power, reinstall from the images listed under `/os-images`, root password and snapshots. Needs the VPS module.",
  "Dedicated servers":
    "Dedicated servers: hardware, addresses, traffic, power, provisioning progress and reinstall. A controller that fails a power action answers 424 PROVIDER_ERROR.",
  "Add-ons and upgrades":
    "Add-ons bought for a service and upgrades to another product or set of options, prorated to the paid-up date.",
  "SSH keys": "Public keys stored on the account, offered when a machine is built or reinstalled.",
  Jobs: "The progress of an accepted asynchronous action.",
  "Products and orders":
    "The orderable catalogue and orders. An order is settled from credit when the balance covers it; otherwise it waits on an invoice or proforma.",
  "Invoices and proformas":
    "Billing documents and paying them from credit, in full or in part. A paid proforma becomes an invoice.",
  Reseller: `Routes for reseller partners, at \`/api/v1/reseller/...\`. Each request needs a reseller key with the \`account\` scope (\`Authorization: Bearer <key>\`) **and a signature** made with the partner's signing secret, the same secret that signs the webhooks sent to the partner:

- \`X-Reseller-Timestamp\`: the current Unix time in seconds. Refused when more than 300 s away from the server's clock.
- \`X-Reseller-Signature\`: \`hmac-sha256=\` followed by the lowercase hex of HMAC-SHA256(signing secret, \`"<timestamp>.<raw body>"\`).

The signed text is the timestamp, a dot, then the exact bytes of the request body as sent (nothing after the dot when there is no body). Sign the bytes you send, not a re-serialised copy. A missing, stale or wrong signature is refused with 401 UNAUTHORIZED. After the secret is rotated, requests signed with the old one are refused at once.

\`\`\`sh
BODY='{"webhookUrl":"https://hooks.example.com/hosting"}'
TS=$(date +%s)
SIG="hmac-sha256=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SIGNING_SECRET" -hex | sed 's/^.* //')"
curl -X PUT "$API/reseller/account/webhook" -H "Authorization: Bearer $RESELLER_KEY" \\
  -H "X-Reseller-Timestamp: $TS" -H "X-Reseller-Signature: $SIG" -d "$BODY"
\`\`\``,
};

/** The headers of a signed reseller request, as OpenAPI header parameters of each reseller operation. */
export const resellerSignatureParameters = [
  {
    name: "X-Reseller-Timestamp",
    in: "header",
    required: true,
    description: "Unix time in seconds; refused when more than 300 s away from the server's clock.",
    schema: { type: "string", pattern: "^[0-9]{9,11}$" },
    example: "1795420800",
  },
  {
    name: "X-Reseller-Signature",
    in: "header",
    required: true,
    description:
      '`hmac-sha256=` + lowercase hex of HMAC-SHA256(signing secret, `"<timestamp>.<raw body>"`). See the Reseller section.',
    schema: { type: "string", pattern: "^hmac-sha256=[0-9a-f]{64}$" },
    example: "hmac-sha256=5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592",
  },
];
