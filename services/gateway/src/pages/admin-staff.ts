/**
 * Staff accounts in the admin panel: the list with each member's permissions, adding a member
 * (whose set-password link is shown once), and a new link for a member. Managing staff is an
 * edit: the page and its nav entry are for staff with edit clients only.
 */
import { Realm } from "@hb/contracts/hb/auth/v1/portal_pb";
import { resolveError, STAFF_PERMISSIONS, type StaffPermission } from "@hb/platform";
import type { Response, Router } from "express";
import type { AdminDeps } from "./admin-page.ts";
import { emptyForm, type FormState, field, formErrors, formFields, generalError } from "./forms.ts";
import { type Html, html } from "./html.ts";
import { sessionOf } from "./session.ts";

export const STAFF_LABELS: Record<StaffPermission, string> = {
  view_clients: "View clients",
  edit_clients: "Edit clients",
  approve_overpayments: "Approve overpayments",
};

const CURRENT = "/admin/staff";

function staffBoxes(prefix: string, chosen: readonly string[]): Html {
  return html`<ul class="plain">${STAFF_PERMISSIONS.map(
    (p) =>
      html`<li><input type="checkbox" id="${prefix}-${p}" name="permissions" value="${p}"${chosen.includes(p) ? html` checked` : ""}> <label for="${prefix}-${p}">${STAFF_LABELS[p]}</label></li>`,
  )}</ul>`;
}

export function staffRoutes(router: Router, d: AdminDeps) {
  const { clients, render, needs, act, linkFor, linkPanel } = d;
  async function staffPage(
    res: Response,
    f: FormState,
    o: { link?: Html; status?: number; notice?: string } = {},
  ) {
    const s = sessionOf(res);
    const { staff } = await clients.portal.listStaff({});
    const body = html`${o.link ?? ""}
${staff.map(
  (
    m,
  ) => html`<section class="card" aria-labelledby="s-${m.id}"><h2 id="s-${m.id}">${m.name} <span class="hint">${m.email}</span></h2>
<form method="post" action="/admin/staff/${m.id}/permissions">${formFields(s.csrfToken)}
<fieldset><legend>Permissions of ${m.name}</legend>${staffBoxes(`sp-${m.id}`, m.permissions)}</fieldset>
<button type="submit">Save permissions<span class="sr"> of ${m.name}</span></button></form>
<form method="post" action="/admin/staff/${m.id}/link" class="inline">${formFields(s.csrfToken)}<button type="submit">Set-password link<span class="sr"> for ${m.name}</span></button></form>
</section>`,
)}
<h2>Add a staff member</h2>
<form method="post" action="/admin/staff" novalidate>
${formFields(s.csrfToken)}
${generalError(f)}
${field(f, "name", "Name", { required: true })}
${field(f, "email", "E-mail address", { type: "email", required: true })}
<fieldset><legend>Permissions</legend>${staffBoxes("ns", (f.values.permissions ?? "").split(","))}</fieldset>
<button type="submit">Add staff member</button>
</form>`;
    render(res, "Staff", body, { status: o.status, notice: o.notice, current: CURRENT });
  }

  router.get(
    "/staff",
    needs("edit_clients", CURRENT, (_req, res) => staffPage(res, emptyForm())),
  );

  act("staff.create", async (_req, res, { name, email, permissions }, audited) => {
    try {
      const { staff } = await audited(
        res,
        { action: "staff.create", after: { name, email, permissions } },
        () => clients.auth.createStaff({ name, email, permissions }),
        (r) => ({ after: { id: r.staff!.id, name: r.staff!.name, email: r.staff!.email, permissions } }),
      );
      const link = await audited(res, { action: "staff.password_link", target: staff!.id }, () =>
        linkFor(Realm.ADMIN, staff!.id),
      );
      await staffPage(res, emptyForm(), { link: linkPanel(staff!.name, link) });
    } catch (err) {
      const values = { name, email, permissions: permissions.join(",") };
      await staffPage(res, formErrors(err, values), { status: resolveError(err).status });
    }
  });

  act("staff.permissions", async (req, res, { permissions }, audited) => {
    const staffId = String(req.params.id);
    const before = (await clients.portal.listStaff({})).staff.find((m) => m.id === staffId);
    if (!before) return staffPage(res, emptyForm(), { status: 404, notice: "No such staff member." });
    const r = await audited(
      res,
      {
        action: "staff.permissions",
        target: staffId,
        before: { permissions: before.permissions },
        after: { permissions },
      },
      () => clients.portal.setStaffPermissions({ staffId, permissions }),
    );
    await staffPage(res, emptyForm(), { notice: `Saved the permissions of ${r.staff!.name}.` });
  });

  act("staff.link", async (req, res, _body, audited) => {
    const { staff } = await clients.portal.listStaff({});
    const m = staff.find((x) => x.id === req.params.id);
    if (!m) return staffPage(res, emptyForm(), { status: 404, notice: "No such staff member." });
    const link = await audited(res, { action: "staff.password_link", target: m.id }, () =>
      linkFor(Realm.ADMIN, m.id),
    );
    await staffPage(res, emptyForm(), { link: linkPanel(m.name, link) });
  });
}
