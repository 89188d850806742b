import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Principal } from "@hb/contracts/hb/auth/v1/auth_pb";
import type { CallerSchema } from "@hb/contracts/hb/platform/v1/caller_pb";
import type { Logger } from "@hb/platform";
import { type Reservation, reserveCooldown } from "@hb/platform/cooldown";
import type { Redis } from "@hb/platform/redis";
import type { Request, Response } from "express";
import type { Clients } from "./clients.ts";
import type { GatewayConfig } from "./config.ts";
import { sendError, sendOk } from "./envelope.ts";
import { sessionPrincipalOf } from "./in-process.ts";
import { type RequestAuth, sourceIpOf } from "./request-auth.ts";
import { type RequestLogPublisher, trackRequest } from "./request-log.ts";
import { API_PREFIX, type Context, needOf, type RouteDef } from "./route.ts";
import { sendResolved } from "./send-resolved.ts";
import { bodyObject, parseInput } from "./validation.ts";

export interface RouteHandlerDeps {
  cfg: GatewayConfig;
  clients: Clients;
  redis: Redis;
  log: Logger;
  auth: RequestAuth;
  requestLog: RequestLogPublisher;
}

/**
 * Serves one route of the table: the key or session check the route needs, its input parsed
 * against its schemas, its cool-down reserved (and given back if the call is refused), its
 * handler, and the answer or the refusal in the spec's envelope; the request log gets the entry.
 */
export function createRouteHandler(deps: RouteHandlerDeps) {
  const { cfg, clients, redis, log, requestLog } = deps;
  const { authenticate, sessionCheck } = deps.auth;
  return async function handle(def: RouteDef, req: Request, res: Response): Promise<void> {
    res.locals.route = API_PREFIX + def.path;
    const track = trackRequest(requestLog, req, res);
    let principal: Principal | undefined;
    let reservation: Reservation | undefined;
    try {
      // A portal session's call stands in for the key and, on the signed (reseller) routes, for
      // the signature: sessionCheck decides it with the partner status auth read for the session.
      const session = sessionPrincipalOf(req);
      if (def.auth !== "none") {
        const need = needOf({ method: def.method, auth: def.auth });
        principal = session
          ? await sessionCheck(req, res, need, session)
          : await authenticate(req, res, need, (p) => {
              track.principal = p;
            });
        if (!principal) return;
      }

      const ctx: Context<unknown, unknown, unknown> = {
        params: def.params ? parseInput(def.params, req.params, "path") : req.params,
        query: def.query ? parseInput(def.query, req.query ?? {}, "query") : {},
        body: def.body ? parseInput(def.body, bodyObject(req.body), "body") : undefined,
        principal: principal as Principal,
        caller: callerOf(principal),
        clients,
        sourceIp: sourceIpOf(req),
        req,
        res,
      };

      if (def.cooldown && principal) {
        reservation = await reserveCooldown(
          redis,
          cfg.HB_NS,
          def.cooldown.rule,
          principal.personId,
          def.cooldown.resource(ctx),
        );
        if (!reservation.ok) {
          return sendError(
            res,
            "ACTION_RATE_LIMITED",
            "Too many requests for this action; wait before retrying",
            {
              retryAfterSeconds: reservation.retryAfterSeconds,
            },
          );
        }
      }

      let reply: Awaited<ReturnType<RouteDef["handler"]>>;
      try {
        reply = await def.handler(ctx);
      } catch (err) {
        // Only accepted calls consume a cool-down: a refused call gives its reservation back.
        if (reservation?.ok) await reservation.release();
        throw err;
      }
      if (!reply) return; // the handler wrote the response itself (documentation routes)
      sendOk(res, reply.status ?? def.successStatus ?? 200, reply.data, reply.extra);
    } catch (err) {
      sendResolved(log, res, err, `${def.method.toUpperCase()} ${def.path}`, def.fieldNames);
    }
  };
}

function callerOf(p: Principal | undefined): MessageInitShape<typeof CallerSchema> {
  if (!p) return {};
  return {
    customerId: p.customerId,
    personId: p.personId,
    keyId: p.keyId,
    permissions: p.permissions,
    isOwner: p.isOwner,
    currency: p.currency,
  };
}
