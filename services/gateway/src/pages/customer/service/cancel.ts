import type { Router } from "express";
import { field } from "../../forms.ts";
import { html } from "../../html.ts";
import { sessionOf } from "../../session.ts";
import { action, bodyText, type Kit, page } from "../kit.ts";
import { may } from "../page-table.ts";
import { at, formTokens } from "../ui.ts";
import { ACT, back, detailOf, notYours, OPS, serviceTabs, svcBase } from "./table.ts";

/** Cancellation: at the end of the term, or now (terminates). */
export function cancelRoutes(kit: Kit, router: Router): void {
  page(kit, router, "/services/:id/cancel", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    const body = html`${serviceTabs(res, s, `${svcBase(s.id)}/cancel`)}
${s.cancellation ? html`<p class="notice">A cancellation is already scheduled for ${at(s.cancellation.effective_at)}.</p>` : ""}
${
  !may(sessionOf(res), ACT.cancel)
    ? notYours("Cancelling a service")
    : html`<p class="warning"><strong>Cancelling ends the service.</strong> At the end of the term it stops renewing; cancelled at once, the machine and its disks are destroyed now.</p>
<form method="post" action="${svcBase(s.id)}/cancel" novalidate>
${formTokens(sessionOf(res).csrfToken)}
${field({ values: {}, errors: {} }, "reason", "Reason (optional)", { multiline: true })}
<fieldset class="field"><legend>When</legend>
<div><input type="radio" id="when-term" name="when" value="end_of_term" checked> <label for="when-term">At the end of the term (${at(s.billing.next_due_date)})</label></div>
<div><input type="radio" id="when-now" name="when" value="now"> <label for="when-now">Now: terminate and destroy the data</label></div>
</fieldset>
<button type="submit" class="danger">Cancel the service</button> <a href="${svcBase(s.id)}">Keep it</a>
</form>`
}`;
    kit.render(res, `Cancel ${s.hostname || s.name}`, body);
  });
  action(kit, router, ACT.cancel, { back }, async (req, _res, api, token) => {
    const id = String(req.params.id);
    const s = await detailOf(api, id);
    const body = { reason: bodyText(req, "reason"), immediate: bodyText(req, "when") === "now" };
    await api(s.kind === "vps" ? OPS.cancelVps : OPS.cancel, { params: { id }, body, token });
    return {
      location: back(req),
      notice: body.immediate
        ? "The service is terminated."
        : "The cancellation is scheduled for the end of the term.",
    };
  });
}
