import type { Client } from "@connectrpc/connect";
import type { PaymentEventService } from "@hb/contracts/hb/billing/v1/payments_pb";
import { type Logger, resolveError } from "@hb/platform";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { parserRefusal } from "./body.ts";
import { sendError, sendOk } from "./envelope.ts";

const STRIPE_WEBHOOK_PATH = "/payments/stripe/webhook";
/** Stripe's events are a few kilobytes; its documented ceiling is far below this. */
const LIMIT = "512kb";

/**
 * The payment provider's webhook: public, outside /api/v1 and without an API key, because the
 * signature over the raw body is its authentication. The gateway does not parse or check the
 * body; it forwards the exact bytes and the Stripe-Signature header to billing, which holds the
 * webhook secret. Billing's answer decides the status: a bad signature 400, billing unreachable
 * 503 (Stripe retries anything but 2xx for three days), 200 otherwise, also for event types
 * billing ignores, so Stripe does not retry them.
 */
export function paymentWebhookRouter(billing: Client<typeof PaymentEventService>, log: Logger): Router {
  const router = express.Router();
  router.post(
    STRIPE_WEBHOOK_PATH,
    (_req, res, next) => {
      res.locals.route = STRIPE_WEBHOOK_PATH;
      next();
    },
    express.raw({ type: () => true, limit: LIMIT }),
    async (req: Request, res: Response) => {
      const payload: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const signature = req.get("stripe-signature") ?? "";
      if (!signature) return sendError(res, "BAD_REQUEST", "The Stripe-Signature header is missing");
      try {
        const r = await billing.handleStripeEvent({ payload, signature });
        sendOk(res, 200, { received: true, acted: r.acted });
      } catch (err) {
        const e = resolveError(err);
        if (e.status >= 500) log.warn("payment webhook not taken: billing unavailable", { err });
        sendError(res, e.code, e.message);
      }
    },
  );
  router.use(STRIPE_WEBHOOK_PATH, (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const refusal = parserRefusal(err as { type?: string; status?: number }, LIMIT);
    if (!refusal) return next(err);
    sendError(res, refusal.code, refusal.message);
  });
  return router;
}
