import { z } from "zod";

/** POST /vps/{id}/console: a ticket to open the console with, once, soon. */
export const consoleTicket = z.object({
  ticket: z.string().describe("Single use; opens one console within expires_in_seconds"),
  url: z
    .string()
    .describe(
      "The WebSocket to open (ws:// or wss://, the ticket already in its query); add &cols=&rows= for the size",
    ),
  expires_at: z.iso.datetime(),
  expires_in_seconds: z.number().int(),
});

export const consoleTicketExample: z.input<typeof consoleTicket> = {
  ticket: "hbct_Vb3n0t4r3alT1ck3t-xxxxxxxxxxxxxxxxxxxxxxxxxxxx",
  url: "wss://api.example.com/api/v1/console/ws?ticket=hbct_Vb3n0t4r3alT1ck3t-xxxxxxxxxxxxxxxxxxxxxxxxxxxx",
  expires_at: "2026-01-15T10:01:00Z",
  expires_in_seconds: 60,
};
