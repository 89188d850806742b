/** What the admin panel's route files are handed by admin.ts: how to draw a page and guard a route. */
import type { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import type { StaffPermission } from "@hb/platform";
import type { Request, Response } from "express";
import type { PageClients } from "../clients.ts";
import type { Act } from "./admin-act.ts";
import type { Html } from "./html.ts";

export type { StaffPermission };

/** Draws a page of the panel in its layout; `current` marks the nav entry, `error` the form's. */
export type AdminRender = (
  res: Response,
  title: string,
  body: Html,
  o: { notice?: string; status?: number; current: string; error?: string },
) => void;

/** Runs `fn` for staff holding `p`; others get the refusal page (403), never the action. */
export type AdminNeeds = (
  p: StaffPermission,
  current: string,
  fn: (req: Request, res: Response) => Promise<void>,
) => (req: Request, res: Response, next: (e: unknown) => void) => void;

/** Everything an admin route module needs: the clients, the layout, the guards, the action table. */
export interface AdminDeps {
  clients: PageClients;
  render: AdminRender;
  needs: AdminNeeds;
  /** Registers a write from the action table (admin-act.ts). */
  act: Act;
  linkFor: (realm: Realm, id: string) => Promise<string>;
  linkPanel: (name: string, url: string) => Html;
}
