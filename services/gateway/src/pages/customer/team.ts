import { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { ALL_PERMISSIONS, PERMISSIONS, type Permission, resolveError } from "@hb/platform";
import type { Request, Response, Router } from "express";
import type { PageClients } from "../../clients.ts";
import {
  checkedPermissions,
  emptyForm,
  type FormState,
  field,
  formErrors,
  generalError,
  personFormValues,
} from "../forms.ts";
import { type Html, html } from "../html.ts";
import type { PageAssets } from "../layout.ts";
import { sessionOf } from "../session.ts";
import type { OnceStore, Outcome } from "./once.ts";
import { validToken } from "./once.ts";
import { pageAction } from "./page-table.ts";
import { formTokens } from "./ui.ts";

export type Render = (
  res: Response,
  title: string,
  body: Html,
  o: { notice?: string; error?: string; status?: number; nav: boolean; assets?: PageAssets },
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
    redirect: "/portal/team?link=:personId (the set-password link, shown once)",
  }),
  permissions: pageAction({
    path: "/team/:id/permissions",
    ops: [],
    own: OWNER,
    redirect: "/portal/team",
  }),
  link: pageAction({
    path: "/team/:id/link",
    ops: [],
    own: OWNER,
    redirect: "/portal/team?link=:id (the link, shown once)",
  }),
  remove: pageAction({
    path: "/team/:id/remove",
    ops: [],
    own: OWNER,
    redirect: "/portal/team",
  }),
};

function permissionBoxes(prefix: string, chosen: readonly string[]): Html {
  return html`<ul class="plain">${ALL_PERMISSIONS.map(
    (p) =>
      html`<li><input type="checkbox" id="${prefix}-${p}" name="permissions" value="${p}"${chosen.includes(p) ? html` checked` : ""}> <label for="${prefix}-${p}">${PERMISSIONS[p as Permission]}</label></li>`,
  )}</ul>`;
}

/**
 * Team: the owner invites members, sets their permissions, sends a new set-password link, removes
 * them. Every form acts once (once.ts): a double click invites one person and sends one link, and a
 * link made by a form is kept for the page its redirect shows, once, never in the URL or the outcome.
 */
export function teamRoutes(
  router: Router,
  clients: PageClients,
  render: Render,
  publicUrl: string,
  once: OnceStore,
) {
  const onlyOwner = (res: Response) =>
    render(res, "Team", html`<p>Only the account owner manages the team.</p>`, { status: 403, nav: true });

  async function teamPage(
    res: Response,
    f: FormState,
    o: { link?: { name: string; url: string }; status?: number; notice?: string; error?: string } = {},
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
${formTokens(s.csrfToken)}
<fieldset><legend>Permissions of ${m.name}</legend>${permissionBoxes(`p-${m.id}`, m.permissions)}</fieldset>
<button type="submit">Save permissions<span class="sr"> of ${m.name}</span></button>
</form>
${
  // A link only sets a first password (auth refuses one for a member who has chosen theirs).
  m.hasPassword
    ? html`<p class="hint">${m.name} has chosen a password.</p>`
    : html`<form method="post" action="/portal/team/${m.id}/link" class="inline">${formTokens(s.csrfToken)}<button type="submit">New set-password link<span class="sr"> for ${m.name}</span></button></form>`
}
<form method="post" action="/portal/team/${m.id}/remove" class="inline">${formTokens(s.csrfToken)}<button type="submit" class="danger">Remove ${m.name}</button></form>
</section>`,
      )
    : html`<p>No team members yet.</p>`
}
<h2>Invite a member</h2>
<form method="post" action="/portal/team" novalidate>
${formTokens(s.csrfToken)}
${generalError(f)}
${field(f, "name", "Name", { required: true })}
${field(f, "email", "E-mail address", { type: "email", required: true })}
<fieldset><legend>Permissions</legend>${permissionBoxes("new", (f.values.permissions ?? "").split(","))}</fieldset>
<button type="submit">Invite</button>
</form>`;
    render(res, "Team", body, { status: o.status, notice: o.notice, error: o.error, nav });
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

  /**
   * A team form, once per its one-time token: the first submission acts, a repeat is sent where
   * the first went (303 with ?done=, whose page shows its notice and, once, a link it made). A
   * refusal of auth's gives the claim back and comes back to `refused`.
   */
  const teamAction = (
    path: string,
    act: (req: Request, res: Response, token: string) => Promise<Outcome>,
    refused: (req: Request, res: Response, err: unknown) => Promise<void>,
  ) =>
    router.post(
      path,
      ownerOnly(async (req, res) => {
        const token = req.body?._once;
        const subject = sessionOf(res).subjectId;
        if (!validToken(token)) return expired(res);
        let outcome: Outcome;
        try {
          outcome = await once.run(subject, token, () => act(req, res, token));
        } catch (err) {
          return refused(req, res, err);
        }
        if (outcome.expired) return expired(res);
        const to = outcome.location || "/portal/team";
        res.redirect(303, `${to}${to.includes("?") ? "&" : "?"}done=${token}`);
      }),
    );
  const expired = (res: Response) =>
    render(
      res,
      "Form expired",
      html`<p role="alert" class="error">This form has expired; go back, reload the page and send it again.</p>`,
      { status: 400, nav: true },
    );
  /** No such member (a stale page, another tab removed them): nothing was done, the form may be sent again. */
  class NoMember extends Error {}
  const memberOrFail = async (res: Response, id: string) => {
    const m = await member(res, id);
    if (!m) throw new NoMember("No such team member");
    return m;
  };
  const refusedOnPage = async (_req: Request, res: Response, err: unknown) => {
    if (err instanceof NoMember)
      return teamPage(res, { values: {}, errors: {}, general: err.message }, { status: 404 });
    const r = resolveError(err);
    if (r.status >= 500) throw err;
    await teamPage(res, emptyForm(), { status: r.status, error: r.message });
  };

  router.get(
    "/team",
    ownerOnly(async (req, res) => {
      const s = sessionOf(res);
      const done = await once.outcome(s.subjectId, req.query.done);
      const url = done && (await once.takeSecret(s.subjectId, req.query.done));
      const linked =
        url && typeof req.query.link === "string" ? await member(res, req.query.link) : undefined;
      await teamPage(res, emptyForm(), {
        notice: done?.notice,
        error: done?.error,
        link: linked && url ? { name: linked.name, url } : undefined,
      });
    }),
  );

  teamAction(
    "/team",
    async (req, res, token) => {
      const { permissions, values } = personFormValues(req.body);
      const { person } = await clients.auth.createPerson({
        customerId: sessionOf(res).customerId,
        name: values.name,
        email: values.email,
        permissions,
      });
      await once.keepSecret(sessionOf(res).subjectId, token, await linkFor(person!.id));
      return { location: `/portal/team?link=${person!.id}`, notice: `Invited ${person!.name}.` };
    },
    async (req, res, err) => {
      const { values } = personFormValues(req.body);
      await teamPage(res, formErrors(err, values), { status: resolveError(err).status });
    },
  );

  teamAction(
    "/team/:id/permissions",
    async (req, res) => {
      const m = await memberOrFail(res, String(req.params.id));
      await clients.auth.setPermissions({ personId: m.id, permissions: checkedPermissions(req.body) });
      return { location: "/portal/team", notice: `Saved the permissions of ${m.name}.` };
    },
    refusedOnPage,
  );

  teamAction(
    "/team/:id/link",
    async (req, res, token) => {
      const m = await memberOrFail(res, String(req.params.id));
      await once.keepSecret(sessionOf(res).subjectId, token, await linkFor(m.id));
      return { location: `/portal/team?link=${m.id}`, notice: `A new set-password link for ${m.name}.` };
    },
    refusedOnPage,
  );

  teamAction(
    "/team/:id/remove",
    async (req, res) => {
      const m = await memberOrFail(res, String(req.params.id));
      await clients.portal.removePerson({ personId: m.id });
      return { location: "/portal/team", notice: `Removed ${m.name}; their keys are revoked.` };
    },
    refusedOnPage,
  );
}
