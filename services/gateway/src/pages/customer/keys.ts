import { type ApiKey, ApiKeyStatus } from "@hb/contracts/hb/auth/v1/api_keys_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import type { Session } from "@hb/contracts/hb/auth/v1/portal_pb";
import { describeNeeds, holdsAny, resolveError, SCOPE_NEEDS, SCOPES } from "@hb/platform";
import express, { type Response, type Router } from "express";
import type { PageClients } from "../../clients.ts";
import { day, dayStart, when } from "../format.ts";
import { emptyForm, type FormState, field, formErrors, generalError } from "../forms.ts";
import { type Html, html } from "../html.ts";
import { logFilterOf, requestLogView } from "../request-log.ts";
import { sessionOf } from "../session.ts";
import type { Kit } from "./kit.ts";
import { type Outcome, validToken } from "./once.ts";
import { may, pageAction } from "./page-table.ts";
import type { Render } from "./team.ts";
import { formTokens } from "./ui.ts";

const KEY_FIELDS = { label: "label", ip_allowlist: "allowlist", expires_on: "expires", scopes: "scopes" };

/** A person's own API keys are auth's: the API has no operation for them. */
const OWN_KEYS = {
  permissions: SCOPE_NEEDS.read,
  write: false,
  why: "a person's own API keys live in auth (the API has no key operations); a key holds the read scope, which needs one of the view permissions",
} as const;
const ACT = {
  create: pageAction({ path: "/keys", ops: [], own: OWN_KEYS, redirect: "/portal/keys?created=:keyId" }),
  edit: pageAction({
    path: "/keys/:id/edit",
    ops: [],
    own: OWN_KEYS,
    redirect: "/portal/keys?saved=1",
  }),
  revoke: pageAction({
    path: "/keys/:id/revoke",
    ops: [],
    own: OWN_KEYS,
    redirect: "/portal/keys?revoked=1",
  }),
};

/** API Keys: the person's keys, created once per form (the secret shown once), edited, revoked, their log. */
export function keyRoutes(
  router: Router,
  clients: PageClients,
  render: Render,
  api: Pick<Kit, "once">,
  apiEnabled: () => Promise<boolean>,
): void {
  // The API Keys pages exist only while the Customer API is on: hidden from the menu and refused.
  const keys = express.Router();
  keys.use(async (_req, res, next) => {
    if (await apiEnabled()) {
      res.locals.current = "/portal/keys";
      return next();
    }
    render(
      res,
      "Not available",
      html`<p>The API Keys page is not available: the Customer API is switched off.</p>`,
      {
        status: 404,
        nav: false,
      },
    );
  });
  router.use("/keys", keys);

  async function keysPage(
    res: Response,
    f: FormState,
    o: { created?: { key: ApiKey; secret: string }; notice?: string; status?: number } = {},
  ) {
    const s = sessionOf(res);
    const list = await clients.auth.listKeys({ personId: s.subjectId });
    const active = list.keys.filter((k) => k.status !== ApiKeyStatus.REVOKED);
    const revoked = list.keys
      .filter((k) => k.status === ApiKeyStatus.REVOKED)
      .sort((a, b) => Number((b.revokedAt?.seconds ?? 0n) - (a.revokedAt?.seconds ?? 0n)));
    const atLimit = list.activeCount >= list.activeLimit;
    const body = html`${o.created ? createdPanel(o.created.key, o.created.secret) : ""}
<p>${list.activeCount} of ${list.activeLimit} active keys on the account are in use.</p>
<h2>Your keys</h2>
${keyTable(active, true)}
${revoked.length ? html`<h2>Revoked keys</h2>${keyTable(revoked, false)}` : ""}
${
  may(s, ACT.create)
    ? html`<h2 id="create">Create a key</h2>
${createForm(s, f, atLimit ? `The account has reached its limit of ${list.activeLimit} active keys; revoke one to create another.` : "")}`
    : ""
}`;
    render(res, "API Keys", body, { notice: o.notice, status: o.status, nav: true });
  }

  keys.get("/", async (req, res, next) => {
    try {
      const notice = req.query.revoked
        ? "The key is revoked."
        : req.query.saved
          ? "The key is saved."
          : undefined;
      // After Create key: the new key's secret, shown on this one page view and never again.
      const s = sessionOf(res);
      const made = await api.once.outcome(s.subjectId, req.query.done);
      const secret = made && (await api.once.takeSecret(s.subjectId, req.query.done));
      const keyId = made?.location.split("created=")[1];
      const key =
        secret && keyId
          ? (await clients.auth.listKeys({ personId: s.subjectId })).keys.find((k) => k.id === keyId)
          : undefined;
      await keysPage(res, emptyForm({ scopes: "read" }), {
        notice:
          made && !key ? "The key was created; its secret was shown once and cannot be shown again." : notice,
        created: key && secret ? { key, secret } : undefined,
      });
    } catch (err) {
      next(err);
    }
  });

  keys.post("/", async (req, res, next) => {
    const s = sessionOf(res);
    if (!may(s, ACT.create)) return notAllowed(res);
    const scopes = [req.body.scopes ?? []].flat().map(String);
    const values = {
      label: String(req.body.label ?? ""),
      expires: String(req.body.expires ?? ""),
      allowlist: String(req.body.allowlist ?? ""),
      scopes: scopes.join(","),
    };
    const expiresOn = dayStart(values.expires);
    if (values.expires && !expiresOn) {
      return keysPage(
        res,
        { values, errors: { expires: "Enter a date as YYYY-MM-DD" } },
        { status: 400 },
      ).catch(next);
    }
    if (scopes.includes("account") && s.partnerStatus !== PartnerStatus.ACTIVE) {
      return keysPage(
        res,
        { values, errors: { scopes: "The account scope is only for active reseller partners" } },
        { status: 403 },
      ).catch(next);
    }
    const token = req.body._once;
    if (!validToken(token)) {
      return keysPage(
        res,
        { values, errors: {}, general: "This form has expired; send it again." },
        { status: 400 },
      ).catch(next);
    }
    try {
      // Once per form (a double click makes one key): a repeat gets the first one's redirect, and
      // the page after it shows the secret the first one kept for it.
      const outcome = await api.once.run(s.subjectId, token, async () => {
        const r = await clients.auth.createKey({
          personId: s.subjectId,
          label: values.label,
          scopes: scopes.filter((x) => x !== "read"),
          ipAllowlist: values.allowlist,
          expiresOn,
        });
        await api.once.keepSecret(s.subjectId, token, r.secretKey);
        return { location: `/portal/keys?created=${r.key?.id ?? ""}` };
      });
      if (outcome.expired) {
        return keysPage(
          res,
          { values, errors: {}, general: "This form has expired; send it again." },
          { status: 400 },
        ).catch(next);
      }
      const to = outcome.location || "/portal/keys";
      res.redirect(303, `${to}${to.includes("?") ? "&" : "?"}done=${token}`);
    } catch (err) {
      try {
        await keysPage(res, formErrors(err, values, KEY_FIELDS), { status: resolveError(err).status });
      } catch (e) {
        next(e);
      }
    }
  });

  /** The form's action, once per its token: a repeat goes where the first went. */
  async function onceOnly(res: Response, token: string, act: () => Promise<Outcome>): Promise<void> {
    const outcome = await api.once.run(sessionOf(res).subjectId, token, act);
    if (outcome.expired) return expired(res);
    res.redirect(303, outcome.location || "/portal/keys");
  }
  const expired = (res: Response) =>
    render(
      res,
      "Form expired",
      html`<p role="alert" class="error">This form has expired; go back, reload the page and send it again.</p>`,
      { status: 400, nav: true },
    );
  /** The table refuses the person (page-table.ts may): the form was not drawn for them either. */
  const notAllowed = (res: Response) =>
    render(
      res,
      "Not available",
      html`<p role="alert" class="error">Your permissions on this account do not cover API keys: a key needs one of the view permissions.</p>`,
      { status: 403, nav: true },
    );

  const ownKey = async (res: Response, id: string) => {
    const list = await clients.auth.listKeys({ personId: sessionOf(res).subjectId });
    return list.keys.find((k) => k.id === id);
  };
  const notFound = (res: Response) =>
    render(
      res,
      "Key not found",
      html`<p>There is no such key among yours. <a href="/portal/keys">Back to API Keys</a></p>`,
      {
        status: 404,
        nav: true,
      },
    );

  function editPage(res: Response, k: ApiKey, f: FormState, status = 200) {
    const s = sessionOf(res);
    render(
      res,
      `Edit key ${k.label}`,
      html`<p class="mono">${k.display}</p>
<p>Scopes cannot be changed; create a new key for other scopes.</p>
<form method="post" action="/portal/keys/${k.id}/edit" novalidate>
${formTokens(s.csrfToken)}
${generalError(f)}
${field(f, "label", "Label", { required: true })}
${field(f, "expires", "Expires on (last day the key works)", { type: "date", hint: "Leave empty for no expiry." })}
${field(f, "allowlist", "IP allowlist", { multiline: true, hint: "Addresses or CIDR ranges, separated by commas or new lines. Empty: any address." })}
<button type="submit">Save</button> <a href="/portal/keys">Cancel</a>
</form>`,
      { status, nav: true },
    );
  }

  keys.get("/:id/edit", async (req, res, next) => {
    try {
      const k = await ownKey(res, req.params.id);
      if (!k || k.status === ApiKeyStatus.REVOKED) return notFound(res);
      editPage(
        res,
        k,
        emptyForm({ label: k.label, expires: day(k.expiresOn), allowlist: k.ipAllowlist.join("\n") }),
      );
    } catch (err) {
      next(err);
    }
  });

  keys.post("/:id/edit", async (req, res, next) => {
    try {
      if (!may(sessionOf(res), ACT.edit)) return notAllowed(res);
      const token = req.body._once;
      if (!validToken(token)) return expired(res);
      const k = await ownKey(res, req.params.id);
      if (!k || k.status === ApiKeyStatus.REVOKED) return notFound(res);
      const values = {
        label: String(req.body.label ?? ""),
        expires: String(req.body.expires ?? ""),
        allowlist: String(req.body.allowlist ?? ""),
      };
      const expiresOn = dayStart(values.expires);
      if (values.expires && !expiresOn)
        return editPage(res, k, { values, errors: { expires: "Enter a date as YYYY-MM-DD" } }, 400);
      try {
        await onceOnly(res, token, async () => {
          await clients.auth.updateKey({
            personId: sessionOf(res).subjectId,
            keyId: k.id,
            label: values.label,
            ipAllowlist: values.allowlist,
            expiry: expiresOn ? { case: "expiresOn", value: expiresOn } : { case: "noExpiry", value: true },
          });
          return { location: "/portal/keys?saved=1" };
        });
      } catch (err) {
        editPage(res, k, formErrors(err, values, KEY_FIELDS), resolveError(err).status);
      }
    } catch (err) {
      next(err);
    }
  });

  keys.get("/:id/revoke", async (req, res, next) => {
    try {
      const k = await ownKey(res, req.params.id);
      if (!k || k.status === ApiKeyStatus.REVOKED) return notFound(res);
      render(
        res,
        `Revoke key ${k.label}`,
        html`<p class="mono">${k.display}</p>
<p class="warning"><strong>Revoking is irreversible.</strong> Every request made with this key is refused from the moment you confirm, and the key cannot be restored.</p>
<form method="post" action="/portal/keys/${k.id}/revoke">
${formTokens(sessionOf(res).csrfToken)}
<button type="submit" class="danger">Revoke this key for good</button> <a href="/portal/keys">Cancel</a>
</form>`,
        { nav: true },
      );
    } catch (err) {
      next(err);
    }
  });

  keys.post("/:id/revoke", async (req, res, next) => {
    try {
      if (!may(sessionOf(res), ACT.revoke)) return notAllowed(res);
      const token = req.body._once;
      if (!validToken(token)) return expired(res);
      const k = await ownKey(res, req.params.id);
      if (!k) return notFound(res);
      await onceOnly(res, token, async () => {
        await clients.auth.revokeKey({ personId: sessionOf(res).subjectId, keyId: k.id });
        return { location: "/portal/keys?revoked=1" };
      });
    } catch (err) {
      next(err);
    }
  });

  keys.get("/:id/log", async (req, res, next) => {
    try {
      const k = await ownKey(res, req.params.id);
      if (!k) return notFound(res);
      const { entries } = await clients.auth.listRequestLog({
        personId: sessionOf(res).subjectId,
        keyId: k.id,
        limit: 1000,
      });
      render(
        res,
        `Request log of ${k.label}`,
        html`<p class="mono">${k.display}</p>${requestLogView(entries, logFilterOf(req.query), `/portal/keys/${k.id}/log`)}
<p><a href="/portal/keys">Back to API Keys</a></p>`,
        { nav: true },
      );
    } catch (err) {
      next(err);
    }
  });
}

function createdPanel(k: ApiKey, secret: string): Html {
  return html`<section class="secret" aria-labelledby="secret-title">
<h2 id="secret-title">Your new key “${k.label}”</h2>
<p class="warning"><strong>Copy this key now. It is shown only this once</strong> and cannot be shown again; if you lose it, revoke it and create another.</p>
<label for="new-key">Full key</label>
<div class="copy-row"><input id="new-key" class="mono" readonly value="${secret}"> <button type="button" data-copy="new-key" hidden>Copy</button></div>
</section>`;
}

const scopeList = (k: ApiKey) => k.scopes.join(", ");

function keyTable(list: ApiKey[], active: boolean): Html {
  if (!list.length) return html`<p>${active ? "No keys yet." : ""}</p>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${active ? "Your keys" : "Revoked keys"}">
<table>
<thead><tr><th scope="col">Key</th><th scope="col">Label</th><th scope="col">Scopes</th><th scope="col">IP allowlist</th><th scope="col">Expires</th><th scope="col">Last used</th>${
    active ? html`<th scope="col">Status</th>` : html`<th scope="col">Revoked</th>`
  }<th scope="col">Actions</th></tr></thead>
<tbody>${list.map(
    (k) => html`<tr>
<td class="mono key">${k.display}</td><td>${k.label}</td><td>${scopeList(k)}</td>
<td>${k.ipAllowlist.length ? k.ipAllowlist.join(", ") : "Any address"}</td>
<td>${day(k.expiresOn) || "Never"}</td>
<td>${k.lastUsedAt ? html`${when(k.lastUsedAt)}<br><span class="mono">${k.lastUsedIp}</span>` : "Never"}</td>
<td>${active ? (k.status === ApiKeyStatus.EXPIRED ? "Expired" : "Active") : when(k.revokedAt)}</td>
<td class="actions"><a href="/portal/keys/${k.id}/log">Request log<span class="sr"> of ${k.label}</span></a>${
      active
        ? html` <a href="/portal/keys/${k.id}/edit">Edit<span class="sr"> ${k.label}</span></a> <a href="/portal/keys/${k.id}/revoke">Revoke<span class="sr"> ${k.label}</span></a>`
        : ""
    }</td>
</tr>`,
  )}</tbody></table></div>`;
}

function createForm(s: Session, f: FormState, disabledReason: string): Html {
  const chosen = new Set((f.values.scopes ?? "").split(","));
  const held = s.permissions;
  const scopeBoxes = SCOPES.map((scope) => {
    if (scope === "account" && s.partnerStatus !== PartnerStatus.ACTIVE) return "";
    const id = `scope-${scope}`;
    if (scope === "read")
      return html`<li><input type="checkbox" id="${id}" checked disabled> <label for="${id}">read</label> <span class="hint">(always on)</span></li>`;
    const allowed = holdsAny(held, SCOPE_NEEDS[scope]);
    return html`<li><input type="checkbox" id="${id}" name="scopes" value="${scope}"${chosen.has(scope) && allowed ? html` checked` : ""}${
      allowed ? "" : html` disabled aria-describedby="${id}-needs"`
    }> <label for="${id}">${scope}</label>${
      allowed
        ? ""
        : html` <span class="hint" id="${id}-needs">needs the ${describeNeeds(SCOPE_NEEDS[scope])} permission</span>`
    }</li>`;
  });
  return html`${disabledReason ? html`<p class="warning" id="limit-reason">${disabledReason}</p>` : ""}
<form method="post" action="/portal/keys" novalidate>
${formTokens(s.csrfToken)}
${generalError(f)}
<fieldset${disabledReason ? html` disabled` : ""}>
<legend class="sr">New key</legend>
${field(f, "label", "Label", { required: true, hint: "A name that says where the key is used." })}
${field(f, "expires", "Expires on (last day the key works)", { type: "date", hint: "Leave empty for no expiry." })}
<fieldset class="scopes"${f.errors.scopes ? html` aria-describedby="f-scopes-error"` : ""}>
<legend>Scopes</legend>
<ul class="plain">${scopeBoxes}</ul>
${f.errors.scopes ? html`<p class="error" id="f-scopes-error">${f.errors.scopes}</p>` : ""}
</fieldset>
${field(f, "allowlist", "IP allowlist", { multiline: true, hint: "Addresses or CIDR ranges, separated by commas or new lines. Empty: any address." })}
<button type="submit"${disabledReason ? html` aria-describedby="limit-reason"` : ""}>Create key</button>
</fieldset>
</form>`;
}
