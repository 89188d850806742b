import { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { ALL_PERMISSIONS, PERMISSIONS, type Permission, resolveError } from "@hb/platform";
import type { Request, Response, Router } from "express";
import type { PageClients } from "../../clients.ts";
import {
  checkedPermissions,
  csrfField,
  emptyForm,
  type FormState,
  field,
  formErrors,
  generalError,
  personFormValues,
} from "../forms.ts";
import { type Html, html } from "../html.ts";
import { sessionOf } from "../session.ts";
import { pageAction } from "./page-table.ts";

export type Render = (
  res: Response,
  title: string,
  body: Html,
  o: { notice?: string; error?: string; status?: number; nav: boolean },
) => void;

/** The team is the account owner's to manage, through auth (the API has no team operations). */
const OWNER = {
  permissions: [],
  write: false,
  ownerOnly: true,
  why: "the team lives in auth and only the account owner manages it; the API has no team operations",
} as const;
export const TEAM = {
  invite: pageAction({
    path: "/team",
    ops: [],
    own: OWNER,
    form: "session",
    redirect: "the Team page, with the set-password link",
  }),
  permissions: pageAction({
    path: "/team/:id/permissions",
    ops: [],
    own: OWNER,
    form: "session",
    redirect: "the Team page",
  }),
  link: pageAction({
    path: "/team/:id/link",
    ops: [],
    own: OWNER,
    form: "session",
    redirect: "the Team page, with the link",
  }),
  remove: pageAction({
    path: "/team/:id/remove",
    ops: [],
    own: OWNER,
    form: "session",
    redirect: "the Team page",
  }),
};

function permissionBoxes(prefix: string, chosen: readonly string[]): Html {
  return html`<ul class="plain">${ALL_PERMISSIONS.map(
    (p) =>
      html`<li><input type="checkbox" id="${prefix}-${p}" name="permissions" value="${p}"${chosen.includes(p) ? html` checked` : ""}> <label for="${prefix}-${p}">${PERMISSIONS[p as Permission]}</label></li>`,
  )}</ul>`;
}

/** Team: the owner invites members, sets their permissions, sends a new set-password link, removes them. */
export function teamRoutes(router: Router, clients: PageClients, render: Render, publicUrl: string) {
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
