/**
 * A local stand-in for the two Stripe endpoints billing calls (create and expire a Checkout
 * Session), answering with Stripe's documented object shapes, and the events Stripe would send
 * for what happens to a session next (paid, refunded, disputed), signed with the official
 * package's own test-header helper. Tests cannot reach Stripe; billing reaches this through
 * STRIPE_API_BASE.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";

export const TEST_SECRET_KEY = "sk_test_standin_0123456789";
export const TEST_WEBHOOK_SECRET = "whsec_standin_0123456789abcdef";

const rid = (prefix: string) => `${prefix}_test_${randomBytes(12).toString("hex")}`;

export interface StandInSession {
  id: string;
  object: "checkout.session";
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  mode: "payment";
  payment_status: "unpaid" | "paid";
  status: "open" | "complete" | "expired";
  payment_intent: string | null;
  success_url: string;
  cancel_url: string;
  url: string | null;
  livemode: false;
  created: number;
  /** Not Stripe's: the idempotency key the session was created with. */
  idempotencyKey: string;
}

export interface SignedEvent {
  id: string;
  type: string;
  payload: string;
  signature: string;
}

export interface StripeStandIn {
  url: string;
  sessions: Map<string, StandInSession>;
  /** Every request: method, path and whether it carried the test secret key. */
  requests: { method: string; path: string; authorised: boolean }[];
  /** Marks the session paid and returns the two events Stripe sends for it. */
  pay(sessionId: string): { completed: SignedEvent; succeeded: SignedEvent };
  /** A charge.refunded event with the refunded total so far (in the smallest unit). */
  refund(sessionId: string, amountRefunded: number): SignedEvent;
  /**
   * A charge.dispute.* event of the session's payment: `created` (default), `updated`,
   * `funds_withdrawn`, `funds_reinstated` or `closed` (with `status` won or lost). The events of one
   * session share one dispute unless `disputeId` names another; `amount` (smallest unit) defaults
   * to the whole payment.
   */
  dispute(
    sessionId: string,
    step?: "created" | "updated" | "funds_withdrawn" | "funds_reinstated" | "closed",
    o?: { status?: string; amount?: number; currency?: string; disputeId?: string },
  ): SignedEvent;
  /** Any event type, e.g. one billing does not act on. */
  event(type: string, object: Record<string, unknown>): SignedEvent;
  close(): Promise<void>;
}

/** Signs as Stripe does (`t=…,v1=…`), with the package's helper. */
export function sign(payload: string, secret = TEST_WEBHOOK_SECRET): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret });
}

function stripeError(status: number, message: string, code?: string) {
  return { status, body: { error: { type: "invalid_request_error", message, ...(code ? { code } : {}) } } };
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const sessions = new Map<string, StandInSession>();
  const byIdempotencyKey = new Map<string, string>();
  const requests: StripeStandIn["requests"] = [];
  let base = "";

  async function answer(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const authorised = req.headers.authorization === `Bearer ${TEST_SECRET_KEY}`;
    requests.push({ method: req.method ?? "", path, authorised });
    if (!authorised)
      return {
        status: 401,
        body: { error: { type: "invalid_request_error", message: "Invalid API Key provided" } },
      };
    const form = await formOf(req);
    if (req.method === "POST" && path === "/v1/checkout/sessions") {
      const key = String(req.headers["idempotency-key"] ?? "");
      const earlier = key ? byIdempotencyKey.get(key) : undefined;
      if (earlier) return { status: 200, body: sessions.get(earlier) };
      const amount = Number(form.get("line_items[0][price_data][unit_amount]"));
      const currency = form.get("line_items[0][price_data][currency]") ?? "";
      if (form.get("mode") !== "payment" || !Number.isInteger(amount) || amount < 1 || !currency) {
        return stripeError(400, "Missing required param: line_items[0][price_data].");
      }
      // Stripe's special case: ISK is counted in hundredths but only whole krónur may be charged.
      if (currency === "isk" && amount % 100 !== 0) {
        return stripeError(
          400,
          "Invalid amount. Currency ISK has become effectively zero-decimal and charged amounts must be evenly divisible by 100.",
          "invalid_charge_amount_no_decimal_compatible",
        );
      }
      const id = rid("cs");
      const metadata: Record<string, string> = {};
      for (const [k, v] of form) {
        const m = /^metadata\[(.+)\]$/.exec(k);
        if (m) metadata[m[1]] = v;
      }
      const session: StandInSession = {
        id,
        object: "checkout.session",
        amount_total: amount * Number(form.get("line_items[0][quantity]") ?? "1"),
        currency,
        client_reference_id: form.get("client_reference_id"),
        metadata,
        mode: "payment",
        payment_status: "unpaid",
        status: "open",
        payment_intent: null,
        success_url: form.get("success_url") ?? "",
        cancel_url: form.get("cancel_url") ?? "",
        url: `${base}/c/pay/${id}`,
        livemode: false,
        created: Math.floor(Date.now() / 1000),
        idempotencyKey: key,
      };
      sessions.set(id, session);
      if (key) byIdempotencyKey.set(key, id);
      return { status: 200, body: session };
    }
    const expire = /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(path);
    if (req.method === "POST" && expire) {
      const s = sessions.get(expire[1]);
      if (!s) return stripeError(404, `No such checkout.session: '${expire[1]}'`, "resource_missing");
      if (s.status !== "open") {
        return stripeError(
          400,
          `Only Checkout Sessions with a status of 'open' can be expired. This session has a status of '${s.status}'.`,
        );
      }
      s.status = "expired";
      s.url = null;
      return { status: 200, body: s };
    }
    return stripeError(404, `Unrecognized request URL (${req.method}: ${path}).`);
  }

  const server: Server = createServer((req, res) => {
    answer(req).then(
      ({ status, body }) => {
        res.writeHead(status, { "content-type": "application/json", "request-id": rid("req") });
        res.end(JSON.stringify(body));
      },
      (err: unknown) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { type: "api_error", message: String(err) } }));
      },
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const event = (type: string, object: Record<string, unknown>): SignedEvent => {
    const id = rid("evt");
    const payload = JSON.stringify(
      {
        id,
        object: "event",
        api_version: "2025-01-27.acacia",
        created: Math.floor(Date.now() / 1000),
        data: { object },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      },
      null,
      2,
    );
    return { id, type, payload, signature: sign(payload) };
  };
  /** The dispute of each session (its events name one dispute). */
  const disputes = new Map<string, string>();
  const session = (id: string) => {
    const s = sessions.get(id);
    if (!s) throw new Error(`no session ${id}`);
    return s;
  };
  const chargeOf = (s: StandInSession, amountRefunded: number) => ({
    id: `ch_${s.payment_intent?.slice(3)}`,
    object: "charge",
    amount: s.amount_total,
    amount_captured: s.amount_total,
    amount_refunded: amountRefunded,
    currency: s.currency,
    payment_intent: s.payment_intent,
    refunded: amountRefunded >= s.amount_total,
    status: "succeeded",
    // Stripe copies a PaymentIntent's metadata to the charge it makes (its support article "How
    // metadata works with related objects"); the session's is the intent's here.
    metadata: s.metadata,
  });

  return {
    url: base,
    sessions,
    requests,
    pay(id) {
      const s = session(id);
      s.status = "complete";
      s.payment_status = "paid";
      s.payment_intent ??= rid("pi");
      const { idempotencyKey: _k, ...wire } = s;
      const completed = event("checkout.session.completed", { ...wire });
      const succeeded = event("payment_intent.succeeded", {
        id: s.payment_intent,
        object: "payment_intent",
        amount: s.amount_total,
        amount_received: s.amount_total,
        currency: s.currency,
        metadata: s.metadata,
        status: "succeeded",
        latest_charge: `ch_${s.payment_intent.slice(3)}`,
      });
      return { completed, succeeded };
    },
    refund: (id, amountRefunded) => event("charge.refunded", chargeOf(session(id), amountRefunded)),
    dispute(id, step = "created", o = {}) {
      const s = session(id);
      const disputeId = o.disputeId ?? disputes.get(id) ?? rid("dp");
      disputes.set(id, disputeId);
      const status =
        o.status ??
        (step === "funds_reinstated" ? "won" : step === "updated" ? "under_review" : "needs_response");
      return event(`charge.dispute.${step}`, {
        id: disputeId,
        object: "dispute",
        amount: o.amount ?? s.amount_total,
        currency: o.currency ?? s.currency,
        charge: `ch_${s.payment_intent?.slice(3)}`,
        payment_intent: s.payment_intent,
        reason: "fraudulent",
        status,
      });
    },
    event,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Posts an event to a gateway's webhook endpoint as Stripe does: the raw body and its signature. */
export async function deliver(gatewayUrl: string, e: { payload: string; signature: string }) {
  const res = await fetch(`${gatewayUrl}/payments/stripe/webhook`, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": e.signature },
    body: e.payload,
  });
  return {
    status: res.status,
    body: (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined,
  };
}
