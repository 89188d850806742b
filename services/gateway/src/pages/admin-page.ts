/** What the admin panel's route files are handed by admin.ts: how to draw a page and guard a route. */
import type { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import type { StaffPermission } from "@hb/platform";
import type { PageClients } from "../clients.ts";
import type { Act } from "./admin-act.ts";
import type { AdminNeeds, AdminRender } from "./admin-guards.ts";
import type { Html } from "./html.ts";

export type { AdminNeeds, AdminRender, StaffPermission };

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
