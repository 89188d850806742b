/** How the admin panel draws a page and guards a route (admin.ts makes both). */
import type { StaffPermission } from "@hb/platform";
import type { Request, Response } from "express";
import type { Html } from "./html.ts";

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
