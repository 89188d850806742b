/**
 * The platform's settings in the admin panel: the Customer API (switch, limits, modules) and the
 * reseller programme's webhook retries. Staff with view clients read them as facts; only staff
 * allowed the save actions (admin-actions.ts) see inputs and buttons.
 */
import { resolveError } from "@hb/platform";
import type { Response, Router } from "express";
import { allowed } from "./admin-actions.ts";
import type { AdminDeps } from "./admin-page.ts";
import { emptyForm, type FormState, field, formErrors, formFields, generalError } from "./forms.ts";
import { type Html, html } from "./html.ts";
import { sessionOf } from "./session.ts";

const CURRENT = "/admin/settings";

const SETTINGS_FIELDS = {
  hourly_request_limit: "hourly",
  active_key_limit: "keys",
  max_attempts: "max_attempts",
  base_delay_seconds: "base_delay",
};

/** A whole number, or undefined (the service's ranges are checked by the service). */
const integer = (v: string) => (/^-?\d{1,9}$/.test(v.trim()) ? Number(v.trim()) : undefined);
const on = (b: boolean | undefined) => (b ? "on" : "");

/** Settings as facts, for staff who may not change them: no inputs to fill and be refused. */
const facts = (rows: [string, string][]): Html =>
  html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
const yes = (v: string | undefined) => (v === "on" ? "On" : "Off");

export function settingsRoutes(router: Router, d: AdminDeps) {
  const { clients, render, needs, act } = d;

  function settingsPage(
    res: Response,
    api: FormState,
    hooks: FormState,
    o: { status?: number; notice?: string } = {},
  ) {
    const csrf = sessionOf(res).csrfToken;
    const box = (f: FormState, name: string, label: string) =>
      html`<div class="check"><input type="checkbox" id="f-${name}" name="${name}" value="on"${f.values[name] === "on" ? html` checked` : ""}> <label for="f-${name}">${label}</label></div>`;
    const apiPart = allowed(res, "settings.customer_api")
      ? html`<form method="post" action="/admin/settings" novalidate>
${formFields(csrf)}
${generalError(api)}
${box(api, "api", "Customer API switched on (off: the API Keys page disappears and every API request is refused)")}
${field(api, "hourly", "Hourly request limit per key", { type: "number", required: true, hint: "1 to 1,000,000" })}
${field(api, "keys", "Active key limit per account", { type: "number", required: true, hint: "1 to 1,000" })}
<fieldset><legend>Modules</legend>
${box(api, "inventory", "Inventory (dedicated servers)")}
${box(api, "vps", "VPS snapshots")}
</fieldset>
<button type="submit">Save Customer API settings</button>
</form>`
      : facts([
          ["Customer API", yes(api.values.api)],
          ["Hourly request limit per key", api.values.hourly ?? ""],
          ["Active key limit per account", api.values.keys ?? ""],
          ["Inventory (dedicated servers)", yes(api.values.inventory)],
          ["VPS snapshots", yes(api.values.vps)],
        ]);
    const hooksPart = allowed(res, "settings.webhooks")
      ? html`<form method="post" action="/admin/settings/webhooks" novalidate>
${formFields(csrf)}
${generalError(hooks)}
${field(hooks, "max_attempts", "Max Retry Attempts", { type: "number", required: true, hint: "1 to 10" })}
${field(hooks, "base_delay", "Base Retry Delay (seconds)", { type: "number", required: true, hint: "10 to 3600" })}
<button type="submit">Save Webhook Settings</button>
</form>`
      : facts([
          ["Max Retry Attempts", hooks.values.max_attempts ?? ""],
          ["Base Retry Delay (seconds)", hooks.values.base_delay ?? ""],
        ]);
    const body = html`<h2>Customer API</h2>
${apiPart}
<h2>Reseller Program: Webhook Settings</h2>
${hooksPart}`;
    render(res, "Settings", body, { status: o.status, notice: o.notice, current: CURRENT });
  }

  const current = async () => {
    const [{ settings: a }, { settings: w }] = await Promise.all([
      clients.auth.getSettings({}),
      clients.webhooks.getProgrammeSettings({}),
    ]);
    return {
      api: emptyForm({
        api: on(a?.customerApiEnabled),
        hourly: String(a?.hourlyRequestLimit ?? ""),
        keys: String(a?.activeKeyLimit ?? ""),
        inventory: on(a?.inventoryModule),
        vps: on(a?.vpsModule),
      }),
      hooks: emptyForm({
        max_attempts: String(w?.maxAttempts ?? ""),
        base_delay: String(w?.baseDelaySeconds ?? ""),
      }),
    };
  };

  router.get(
    "/settings",
    needs("view_clients", CURRENT, async (req, res) => {
      const c = await current();
      settingsPage(res, c.api, c.hooks, { notice: req.query.saved ? "Saved." : undefined });
    }),
  );

  act("settings.customer_api", async (_req, res, body, audited) => {
    const values = {
      api: body.api === "on" ? "on" : "",
      hourly: body.hourly,
      keys: body.keys,
      inventory: body.inventory === "on" ? "on" : "",
      vps: body.vps === "on" ? "on" : "",
    };
    const errors: Record<string, string> = {};
    const hourly = integer(values.hourly);
    const keys = integer(values.keys);
    if (hourly === undefined) errors.hourly = "Enter a whole number from 1 to 1000000";
    if (keys === undefined) errors.keys = "Enter a whole number from 1 to 1000";
    const c = await current();
    if (Object.keys(errors).length) return settingsPage(res, { values, errors }, c.hooks, { status: 400 });
    try {
      const asked = {
        customerApiEnabled: values.api === "on",
        hourlyRequestLimit: hourly,
        activeKeyLimit: keys,
        inventoryModule: values.inventory === "on",
        vpsModule: values.vps === "on",
      };
      await audited(res, { action: "settings.customer_api", before: c.api.values, after: values }, () =>
        clients.auth.updateSettings(asked),
      );
      res.redirect(303, "/admin/settings?saved=1");
    } catch (err) {
      settingsPage(res, formErrors(err, values, SETTINGS_FIELDS), c.hooks, {
        status: resolveError(err).status,
      });
    }
  });

  act("settings.webhooks", async (_req, res, values, audited) => {
    const errors: Record<string, string> = {};
    const maxAttempts = integer(values.max_attempts);
    const baseDelay = integer(values.base_delay);
    if (maxAttempts === undefined) errors.max_attempts = "Enter a whole number from 1 to 10";
    if (baseDelay === undefined) errors.base_delay = "Enter a whole number from 10 to 3600";
    const c = await current();
    if (Object.keys(errors).length) return settingsPage(res, c.api, { values, errors }, { status: 400 });
    try {
      await audited(res, { action: "settings.webhooks", before: c.hooks.values, after: values }, () =>
        clients.webhooks.updateProgrammeSettings({ maxAttempts, baseDelaySeconds: baseDelay }),
      );
      res.redirect(303, "/admin/settings?saved=1");
    } catch (err) {
      settingsPage(res, c.api, formErrors(err, values, SETTINGS_FIELDS), {
        status: resolveError(err).status,
      });
    }
  });
}
