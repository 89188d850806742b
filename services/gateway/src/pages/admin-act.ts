/**
 * Registers the admin panel's writes from their table (admin-actions.ts): the route, its staff
 * permission and one-time token (`needs`), its request schema, and an auditor bound to the
 * action's declared audit entries. A write is registered nowhere else.
 */
import type { Request, Response, Router } from "express";
import { type ActionBody, ADMIN_ACTIONS, type AdminAction, type AdminActionName } from "./admin-actions.ts";
import type { AdminNeeds, AdminRender } from "./admin-guards.ts";
import { html } from "./html.ts";
import type { Audited, StaffWrite } from "./staff-audit.ts";

/** `audited` for one action: it may write only the audit entries the table declares for it. */
export type ActionAudited = Audited;

export type ActionHandler<N extends AdminActionName> = (
  req: Request,
  res: Response,
  body: ActionBody<N>,
  audited: ActionAudited,
) => Promise<void>;

export type Act = <N extends AdminActionName>(name: N, handler: ActionHandler<N>) => void;

export function actionRoutes(router: Router, needs: AdminNeeds, audited: Audited, render: AdminRender): Act {
  return (name, handler) => {
    const a: AdminAction = ADMIN_ACTIONS[name];
    const bound: Audited = (res, w: StaffWrite, write, outcome) => {
      // A write under an audit name the table does not declare is a mistake in the code.
      if (!a.audit.includes(w.action))
        throw new Error(`${name} does not declare the audit entry ${w.action}`);
      return audited(res, w, write, outcome);
    };
    router.post(
      a.path,
      needs(a.permission, a.area, async (req, res) => {
        const parsed = a.schema.safeParse(req.body ?? {});
        if (!parsed.success) {
          const message = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
          return render(res, "Form not accepted", html`<p role="alert" class="error">${message}</p>`, {
            status: 400,
            current: a.area,
          });
        }
        await handler(req, res, parsed.data as ActionBody<typeof name>, bound);
      }),
    );
  };
}
