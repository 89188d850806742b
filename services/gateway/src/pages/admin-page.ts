/** What the admin panel's route files are handed by admin.ts: how to draw a page and guard a route. */
import type { Request, Response } from "express";
import type { Html } from "./html.ts";

export type StaffPermission = "view_clients" | "edit_clients" | "approve_overpayments";

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
