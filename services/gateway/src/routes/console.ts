import { z } from "zod";
import { CONSOLE_SOCKET_PATH } from "../console/socket.ts";
import type { ConsoleTickets } from "../console/tickets.ts";
import { sessionPrincipalOf } from "../in-process.ts";
import { API_PREFIX, route } from "../route.ts";
import { idParam } from "../schemas.ts";
import { consoleTicket, consoleTicketExample } from "../wire/console.ts";

const description = `A ticket for the VPS's web console, a terminal on the machine's login prompt (root and its
password; \`POST /vps/{id}/password\` sets it). Open the WebSocket in \`url\` within
\`expires_in_seconds\`; the ticket opens one console, once. Binary frames carry the terminal's
bytes both ways (keystrokes up, output down); a text frame \`{"type":"resize","cols":120,"rows":40}\`
changes the size. The console closes (code 1000, reason \`ended\`, \`suspended\`, \`terminated\`,
\`stopped\`) when its login session ends, the service is suspended or ended, or the machine stops.
A refused WebSocket is answered with this API's error envelope and status (401 for a ticket
unknown, used or expired; 403 for a suspended service; 409 for a machine not running). Every
console opened is recorded with the key that asked for it. Needs the manage permission: a
console is the machine's root login. A simulated VPS's console says it is simulated and echoes.`;

/**
 * POST /vps/{id}/console. The console itself is the WebSocket (console/socket.ts); this hands out
 * its ticket once compute says the machine can open one now.
 */
export function consoleRoute(publicUrl: string, tickets?: ConsoleTickets) {
  const socketBase = `${publicUrl.replace(/^http/, "ws").replace(/\/$/, "")}${CONSOLE_SOCKET_PATH}`;
  return route({
    method: "post",
    path: "/vps/:id/console",
    tag: "VPS",
    summary: "Web console: a short-lived, single-use WebSocket ticket",
    description,
    auth: { scope: "services", permissions: ["manage_services"] },
    params: z.object({ id: idParam }),
    response: consoleTicket,
    example: consoleTicketExample,
    successStatus: 201,
    errors: ["CONFLICT", "ACTION_NOT_ALLOWED"],
    handler: async ({ clients, caller, params, req }) => {
      if (!tickets) throw new Error(`${API_PREFIX}/vps/:id/console served without a ticket store`);
      await clients.console.checkConsole({ caller, serviceId: params.id });
      const issued = await tickets.issue({
        customerId: caller.customerId ?? "",
        personId: caller.personId ?? "",
        keyId: caller.keyId ?? "",
        permissions: [...(caller.permissions ?? [])],
        isOwner: caller.isOwner ?? false,
        currency: caller.currency ?? "",
        serviceId: params.id,
        via: sessionPrincipalOf(req) ? "portal" : "api",
      });
      return {
        status: 201,
        data: {
          ticket: issued.ticket,
          url: `${socketBase}?ticket=${issued.ticket}`,
          expires_at: issued.expiresAt.toISOString(),
          expires_in_seconds: tickets.ttlSeconds,
        },
      };
    },
  });
}
