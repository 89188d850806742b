import { type ApiKey, ApiKeyStatus } from "@hb/contracts/hb/auth/v1/api_keys_pb";
import { PartnerStatus } from "@hb/contracts/hb/auth/v1/partners_pb";
import { Realm, type Session } from "@hb/contracts/hb/auth/v1/portal_pb";
import {
  ALL_PERMISSIONS,
  describeNeeds,
  holdsAny,
  PERMISSIONS,
  type Permission,
  resolveError,
  SCOPE_NEEDS,
  SCOPES,
} from "@hb/platform";
import express, { type Request, type Response, type Router } from "express";
import type { PageClients } from "../clients.ts";
import { billingRoutes } from "./customer/billing.ts";
import type { Kit } from "./customer/kit.ts";
import { machineRoutes } from "./customer/machines.ts";
import { newToken, validToken } from "./customer/once.ts";
import { serviceRoutes } from "./customer/services.ts";
import { topUpRoutes } from "./customer/top-up.ts";
import { day, dayStart, when } from "./format.ts";
import {
  checkedPermissions,
  csrfField,
  emptyForm,
  type FormState,
  field,
  formErrors,
  generalError,
  personFormValues,
} from "./forms.ts";
import { type Html, html } from "./html.ts";
import { page } from "./layout.ts";
import { logFilterOf, requestLogView } from "./request-log.ts";
import { resellerRoutes } from "./reseller.ts";
import { sendPage } from "./respond.ts";
import { type CookieWriter, PORTAL, requireSession, sessionOf } from "./session.ts";
import { signInRoutes } from "./sign-in.ts";

const KEY_FIELDS = { label: "label", ip_allowlist: "allowlist", expires_on: "expires", scopes: "scopes" };

/**
 * The client portal: the customer's operations (services, orders, invoices and proformas, balance,
 * SSH keys, jobs) through the API in process, and the account pages (API Keys while the Customer
 * API is on, Team, Reseller) through auth.
 */
export function portalRouter(
  clients: PageClients,
  setCookie: CookieWriter,
  publicUrl: string,
  api: Pick<Kit, "call" | "once" | "cooldown">,
): Router {
  const router = express.Router();
  signInRoutes(router, PORTAL, clients, setCookie);
  router.use(requireSession(PORTAL, clients));

  const apiEnabled = async () => (await clients.auth.getSettings({})).settings?.customerApiEnabled ?? false;

  function render(
    res: Response,
    title: string,
    body: Html,
    o: { notice?: string; error?: string; status?: number; nav: boolean },
  ) {
    const s = sessionOf(res);
    // A menu entry shows when the person holds the permission of the API operation its page
    // lists (a hint only: the API decides each call).
    const areas: { href: string; label: string; needs: Permission }[] = [
      { href: "/portal/services", label: "Services", needs: "view_services" },
      { href: "/portal/order", label: "Order", needs: "view_services" },
      { href: "/portal/orders", label: "Orders", needs: "view_invoices" },
      { href: "/portal/invoices", label: "Invoices", needs: "view_invoices" },
      { href: "/portal/proformas", label: "Proformas", needs: "view_invoices" },
      { href: "/portal/balance", label: "Balance", needs: "view_billing" },
      { href: "/portal/add-credit", label: "Add credit", needs: "pay_invoices" },
      { href: "/portal/ssh-keys", label: "SSH keys", needs: "view_services" },
      { href: "/portal/jobs", label: "Jobs", needs: "view_services" },
    ];
    const nav = [
      ...areas.filter((a) => holdsAny(s.permissions, [a.needs])).map(({ href, label }) => ({ href, label })),
      ...(o.nav ? [{ href: "/portal/keys", label: "API Keys" }] : []),
      { href: "/portal/team", label: "Team" },
      ...(s.isOwner ? [{ href: "/portal/reseller", label: "Reseller" }] : []),
    ];
    sendPage(
      res,
      page({
        title,
        area: PORTAL.name,
        body,
        nav,
        current: res.locals.current as string | undefined,
        notice: o.notice,
        error: o.error,
        user: { name: s.name, signOut: "/portal/sign-out", csrf: s.csrfToken },
      }),
      o.status,
    );
  }

  router.get("/", (_req, res) => {
    const held = sessionOf(res).permissions;
    res.redirect(
      303,
      holdsAny(held, ["view_services"])
        ? "/portal/services"
        : holdsAny(held, ["view_invoices"])
          ? "/portal/invoices"
          : "/portal/team",
    );
  });

  // The customer's operations: each page calls the API in process as the signed-in person.
  const kit: Kit = {
    ...api,
    render: (res, title, body, o = {}) => render(res, title, body, { ...o, nav: res.locals.apiOn === true }),
  };
  router.use(async (req, res, next) => {
    // The menu marks the area a page belongs to (/portal/services/x is under Services), and shows
    // API Keys only while the Customer API is on.
    res.locals.current ??= `/portal/${req.path.split("/")[1] ?? ""}`;
    try {
      res.locals.apiOn = await apiEnabled();
      next();
    } catch (err) {
      next(err);
    }
  });
  serviceRoutes(kit, router);
  billingRoutes(kit, router);
  topUpRoutes(kit, router, clients.topUps, publicUrl);
  machineRoutes(kit, router);

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
<h2 id="create">Create a key</h2>
${createForm(s, f, atLimit ? `The account has reached its limit of ${list.activeLimit} active keys; revoke one to create another.` : "")}`;
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
${csrfField(s.csrfToken)}
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
        await clients.auth.updateKey({
          personId: sessionOf(res).subjectId,
          keyId: k.id,
          label: values.label,
          ipAllowlist: values.allowlist,
          expiry: expiresOn ? { case: "expiresOn", value: expiresOn } : { case: "noExpiry", value: true },
        });
        res.redirect(303, "/portal/keys?saved=1");
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
${csrfField(sessionOf(res).csrfToken)}
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
      const k = await ownKey(res, req.params.id);
      if (!k) return notFound(res);
      await clients.auth.revokeKey({ personId: sessionOf(res).subjectId, keyId: k.id });
      res.redirect(303, "/portal/keys?revoked=1");
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

  teamRoutes(router, clients, render, publicUrl);
  resellerRoutes(router, clients, render);
  return router;
}

type Render = (
  res: Response,
  title: string,
  body: Html,
  o: { notice?: string; status?: number; nav: boolean },
) => void;

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
${csrfField(s.csrfToken)}<input type="hidden" name="_once" value="${newToken()}">
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

function permissionBoxes(prefix: string, chosen: readonly string[]): Html {
  return html`<ul class="plain">${ALL_PERMISSIONS.map(
    (p) =>
      html`<li><input type="checkbox" id="${prefix}-${p}" name="permissions" value="${p}"${chosen.includes(p) ? html` checked` : ""}> <label for="${prefix}-${p}">${PERMISSIONS[p as Permission]}</label></li>`,
  )}</ul>`;
}

/** Team: the owner invites members, sets their permissions, sends a new set-password link, removes them. */
function teamRoutes(router: Router, clients: PageClients, render: Render, publicUrl: string) {
  const onlyOwner = (res: Response) =>
    render(res, "Team", html`<p>Only the account owner manages the team.</p>`, { status: 403, nav: true });

  async function teamPage(
    res: Response,
    f: FormState,
    o: { link?: { name: string; url: string }; status?: number; notice?: string } = {},
  ) {
    const s = sessionOf(res);
    const nav = await clients.auth.getSettings({}).then((r) => r.settings?.customerApiEnabled ?? false);
    res.locals.current = "/portal/team";
    const { people } = await clients.auth.getCustomer({ customerId: s.customerId });
    const members = people.filter((p) => !p.isOwner);
    const body = html`${
      o.link
        ? html`<section class="secret" aria-labelledby="link-title"><h2 id="link-title">Set-password link for ${o.link.name}</h2>
<p class="warning">Send this link to ${o.link.name}. It works once and is shown only now.</p>
<label for="new-link">Link</label><div class="copy-row"><input id="new-link" class="mono" readonly value="${o.link.url}"> <button type="button" data-copy="new-link" hidden>Copy</button></div></section>`
        : ""
    }
<h2>Members</h2>
${
  members.length
    ? members.map(
        (m) => html`<section class="card" aria-labelledby="m-${m.id}">
<h3 id="m-${m.id}">${m.name} <span class="hint">${m.email}</span></h3>
<form method="post" action="/portal/team/${m.id}/permissions">
${csrfField(s.csrfToken)}
<fieldset><legend>Permissions of ${m.name}</legend>${permissionBoxes(`p-${m.id}`, m.permissions)}</fieldset>
<button type="submit">Save permissions<span class="sr"> of ${m.name}</span></button>
</form>
${
  // A link only sets a first password (auth refuses one for a member who has chosen theirs).
  m.hasPassword
    ? html`<p class="hint">${m.name} has chosen a password.</p>`
    : html`<form method="post" action="/portal/team/${m.id}/link" class="inline">${csrfField(s.csrfToken)}<button type="submit">New set-password link<span class="sr"> for ${m.name}</span></button></form>`
}
<form method="post" action="/portal/team/${m.id}/remove" class="inline">${csrfField(s.csrfToken)}<button type="submit" class="danger">Remove ${m.name}</button></form>
</section>`,
      )
    : html`<p>No team members yet.</p>`
}
<h2>Invite a member</h2>
<form method="post" action="/portal/team" novalidate>
${csrfField(s.csrfToken)}
${generalError(f)}
${field(f, "name", "Name", { required: true })}
${field(f, "email", "E-mail address", { type: "email", required: true })}
<fieldset><legend>Permissions</legend>${permissionBoxes("new", (f.values.permissions ?? "").split(","))}</fieldset>
<button type="submit">Invite</button>
</form>`;
    render(res, "Team", body, { status: o.status, notice: o.notice, nav });
  }

  const linkFor = async (personId: string) => {
    const r = await clients.portal.createPasswordLink({ realm: Realm.PORTAL, subjectId: personId });
    return `${publicUrl}/portal/set-password?token=${encodeURIComponent(r.token)}`;
  };
  const member = async (res: Response, id: string) => {
    const { people } = await clients.auth.getCustomer({ customerId: sessionOf(res).customerId });
    return people.find((p) => p.id === id && !p.isOwner);
  };
  const ownerOnly =
    (fn: (req: Request, res: Response) => Promise<void>) =>
    async (req: Request, res: Response, next: (e: unknown) => void) => {
      if (!sessionOf(res).isOwner) return onlyOwner(res);
      fn(req, res).catch(next);
    };

  router.get(
    "/team",
    ownerOnly((_req, res) => teamPage(res, emptyForm())),
  );

  router.post(
    "/team",
    ownerOnly(async (req, res) => {
      const { permissions, values } = personFormValues(req.body);
      try {
        const { person } = await clients.auth.createPerson({
          customerId: sessionOf(res).customerId,
          name: values.name,
          email: values.email,
          permissions,
        });
        await teamPage(res, emptyForm(), { link: { name: person!.name, url: await linkFor(person!.id) } });
      } catch (err) {
        await teamPage(res, formErrors(err, values), { status: resolveError(err).status });
      }
    }),
  );

  router.post(
    "/team/:id/permissions",
    ownerOnly(async (req, res) => {
      const m = await member(res, String(req.params.id));
      if (!m)
        return teamPage(res, { values: {}, errors: {}, general: "No such team member" }, { status: 404 });
      await clients.auth.setPermissions({
        personId: m.id,
        permissions: checkedPermissions(req.body),
      });
      await teamPage(res, emptyForm(), { notice: `Saved the permissions of ${m.name}.` });
    }),
  );

  router.post(
    "/team/:id/link",
    ownerOnly(async (req, res) => {
      const m = await member(res, String(req.params.id));
      if (!m)
        return teamPage(res, { values: {}, errors: {}, general: "No such team member" }, { status: 404 });
      await teamPage(res, emptyForm(), { link: { name: m.name, url: await linkFor(m.id) } });
    }),
  );

  router.post(
    "/team/:id/remove",
    ownerOnly(async (req, res) => {
      const m = await member(res, String(req.params.id));
      if (!m)
        return teamPage(res, { values: {}, errors: {}, general: "No such team member" }, { status: 404 });
      await clients.portal.removePerson({ personId: m.id });
      await teamPage(res, emptyForm(), { notice: `Removed ${m.name}; their keys are revoked.` });
    }),
  );
}
