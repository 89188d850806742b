/**
 * A customer's people in the admin panel: who they are and what they may do, adding a person
 * (whose set-password link is shown once), a link for a person without a password, permissions.
 */
import type { Person } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { ALL_PERMISSIONS, PERMISSIONS, type Permission, resolveError } from "@hb/platform";
import type { Request, Response, Router } from "express";
import { allowed } from "./admin-actions.ts";
import { CURRENT, type CustomerShell, table } from "./admin-customer-view.ts";
import type { AdminDeps } from "./admin-page.ts";
import {
  emptyForm,
  type FormState,
  field,
  formErrors,
  formFields,
  generalError,
  personFormValues,
} from "./forms.ts";
import { type Html, html } from "./html.ts";
import { sessionOf } from "./session.ts";

export function customerPeopleRoutes(router: Router, d: AdminDeps, shell: CustomerShell) {
  const { clients, needs, act } = d;
  const { load, show, done, back } = shell;

  // People -------------------------------------------------------------------------------------
  async function peopleTab(
    req: Request,
    res: Response,
    o: { f?: FormState; code?: number; link?: Html } = {},
  ) {
    const r = await load(req, res);
    if (!r) return;
    const c = r.customer!;
    const may = {
      link: allowed(res, "person.link"),
      permissions: allowed(res, "person.permissions"),
      create: allowed(res, "person.create"),
    };
    const csrf = sessionOf(res).csrfToken;
    const f = o.f ?? emptyForm();
    const boxes = (prefix: string, chosen: readonly string[]) =>
      html`<ul class="plain">${ALL_PERMISSIONS.map(
        (p) =>
          html`<li><input type="checkbox" id="${prefix}-${p}" name="permissions" value="${p}"${chosen.includes(p) ? html` checked` : ""}> <label for="${prefix}-${p}">${PERMISSIONS[p]}</label></li>`,
      )}</ul>`;
    const held = (p: Person) =>
      p.isOwner ? "All" : p.permissions.map((x) => PERMISSIONS[x as Permission] ?? x).join(", ") || "None";
    const content = html`<h2>People</h2>
${table(
  "People",
  ["Name", "E-mail", "Role", "Permissions", ...(may.link ? ["Sign-in"] : [])],
  r.people.map(
    (p) =>
      html`<tr><td>${p.name}</td><td>${p.email}</td><td>${p.isOwner ? "Owner" : "Member"}</td><td>${held(p)}</td>${
        may.link
          ? p.hasPassword
            ? // Only the person sets a password they already have (no takeover by staff).
              html`<td>Password set</td>`
            : html`<td><form method="post" action="/admin/customers/${c.id}/people/${p.id}/link">${formFields(csrf)}<button type="submit">Set-password link<span class="sr"> for ${p.name}</span></button></form></td>`
          : ""
      }</tr>`,
  ),
)}
${
  may.permissions
    ? r.people
        .filter((p) => !p.isOwner)
        .map(
          (
            p,
          ) => html`<form method="post" action="/admin/customers/${c.id}/people/${p.id}/permissions" class="card">${formFields(csrf)}
<fieldset><legend>Permissions of ${p.name}</legend>${boxes(`pp-${p.id}`, p.permissions)}</fieldset>
<button type="submit">Save permissions<span class="sr"> of ${p.name}</span></button></form>`,
        )
    : ""
}
${
  may.create
    ? html`<h2>Add a person</h2>
<form method="post" action="/admin/customers/${c.id}/people" novalidate>
${formFields(csrf)}
${generalError(f)}
${field(f, "name", "Name", { required: true })}
${field(f, "email", "E-mail address", { type: "email", required: true })}
<fieldset><legend>Permissions</legend>${boxes("np", (f.values.permissions ?? "").split(","))}</fieldset>
<button type="submit">Add person</button>
</form>`
    : ""
}`;
    show(res, c, "people", content, { notice: done(req), status: o.code, link: o.link });
  }

  router.get(
    "/customers/:id/people",
    needs("view_clients", CURRENT, (req, res) => peopleTab(req, res)),
  );

  act("person.create", async (req, res, body, audited) => {
    const { permissions, values } = personFormValues(body);
    const customerId = String(req.params.id);
    try {
      const { person } = await audited(
        res,
        {
          action: "person.create",
          customerId,
          after: { name: values.name, email: values.email, permissions },
        },
        () => clients.auth.createPerson({ customerId, name: values.name, email: values.email, permissions }),
        (r) => ({ after: { id: r.person!.id, name: r.person!.name, email: r.person!.email, permissions } }),
      );
      // The link is shown once, on this answer: it is a credential, so no redirect carries it.
      const link = await audited(
        res,
        { action: "person.password_link", customerId, target: person!.id },
        () => d.linkFor(Realm.PORTAL, person!.id),
      );
      await peopleTab(req, res, { link: d.linkPanel(person!.name, link) });
    } catch (err) {
      await peopleTab(req, res, { f: formErrors(err, values), code: resolveError(err).status });
    }
  });

  act("person.link", async (req, res, _body, audited) => {
    const r = await load(req, res);
    if (!r) return;
    const p = r.people.find((x) => x.id === req.params.person);
    if (!p) return show(res, r.customer!, "people", html`<p>No such person.</p>`, { status: 404 });
    const link = await audited(
      res,
      { action: "person.password_link", customerId: r.customer!.id, target: p.id },
      () => d.linkFor(Realm.PORTAL, p.id),
    );
    await peopleTab(req, res, { link: d.linkPanel(p.name, link) });
  });

  act("person.permissions", async (req, res, body, audited) => {
    const r = await load(req, res);
    if (!r) return;
    const c = r.customer!;
    const p = r.people.find((x) => x.id === req.params.person);
    if (!p) return show(res, c, "people", html`<p>No such person.</p>`, { status: 404 });
    const permissions = body.permissions;
    try {
      await audited(
        res,
        {
          action: "person.permissions",
          customerId: c.id,
          target: p.id,
          before: { permissions: p.permissions },
          after: { permissions },
        },
        () => clients.auth.setPermissions({ personId: p.id, permissions }),
      );
      back(res, c.id, "people", "permissions");
    } catch (err) {
      const e = resolveError(err);
      if (e.status >= 500) throw err;
      await peopleTab(req, res, { f: { values: {}, errors: {}, general: e.message }, code: e.status });
    }
  });
}
