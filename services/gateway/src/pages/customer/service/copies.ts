import type { Request, Router } from "express";
import type { z } from "zod";
import type { backupList, snapshotList } from "../../../wire/copy.ts";
import { type Html, html } from "../../html.ts";
import { sessionOf } from "../../session.ts";
import { action, bodyText, doneOf, type Kit, page } from "../kit.ts";
import { may, type PageAction } from "../page-table.ts";
import { at, badge, formTokens, table } from "../ui.ts";
import { ACT, attempt, detailOf, notYours, OPS, serviceTabs, svcBase, toJob } from "./table.ts";

/** Snapshots (VPS) and backups (any service), each restore or delete asked first. */
export function copyRoutes(kit: Kit, router: Router): void {
  // Snapshots (VPS) and backups (any service).
  page(kit, router, "/services/:id/copies", async (req, res, api) => {
    const s = await detailOf(api, String(req.params.id));
    const id = s.id;
    const session = sessionOf(res);
    const csrf = session.csrfToken;
    const base = svcBase(id);
    /** The row's link to an action's question, for a person who may use the action. */
    const ask = (a: PageAction, href: string, label: string) =>
      may(session, a) ? html`<a href="${href}">${label}</a>` : "";
    const [snaps, backs] = await Promise.all([
      s.kind === "vps"
        ? attempt(api<z.infer<typeof snapshotList>>(OPS.snapshots, { params: { id } }))
        : Promise.resolve(undefined),
      attempt(api<z.infer<typeof backupList>>(OPS.backups, { params: { id } })),
    ]);
    const body = html`${serviceTabs(res, s, `${base}/copies`)}
${
  snaps
    ? html`<h2>Snapshots</h2>
${
  snaps.value
    ? copiesTable(
        "Snapshots",
        snaps.value.snapshots,
        (c) =>
          html`${ask(ACT.revert, `${base}/snapshots/${c.id}/revert`, "Revert to it")} ${ask(ACT.deleteSnapshot, `${base}/snapshots/${c.id}/delete`, "Delete")}`,
      )
    : html`<p class="empty">${snaps.refused}</p>`
}
${
  may(session, ACT.snapshot)
    ? html`<form method="post" action="${base}/snapshots" class="inline-form">${formTokens(csrf)}
<div class="field"><label for="f-snap">Snapshot name</label><input id="f-snap" name="name" maxlength="100"></div>
<button type="submit">Take a snapshot</button></form>`
    : ""
}`
    : ""
}
<h2>Backups</h2>
${
  backs.value
    ? copiesTable("Backups", backs.value.backups, (c) =>
        ask(ACT.restore, `${base}/backups/${c.id}/restore`, "Restore it"),
      )
    : html`<p class="empty">${backs.refused}</p>`
}
${
  may(session, ACT.backup)
    ? html`<form method="post" action="${base}/backups" class="inline-form">${formTokens(csrf)}
<div class="field"><label for="f-backup">Backup name</label><input id="f-backup" name="name" maxlength="100"></div>
<button type="submit">Take a backup</button></form>`
    : ""
}`;
    kit.render(res, `Copies of ${s.hostname || s.name}`, body, await doneOf(kit, req, res));
  });
  const copies = (req: Request) => `${svcBase(String(req.params.id))}/copies`;
  const copyName = (req: Request) => (bodyText(req, "name") ? { name: bodyText(req, "name") } : {});
  for (const [a, op, what] of [
    [ACT.snapshot, OPS.snapshot, "Snapshot"],
    [ACT.backup, OPS.backup, "Backup"],
  ] as const) {
    action(kit, router, a, { back: copies }, async (req, _res, api, token) => {
      const r = await api<{ job_id?: string }>(op, {
        params: { id: String(req.params.id) },
        body: copyName(req),
        token,
      });
      return {
        location: copies(req),
        notice: `${what} started${r.data.job_id ? ` (job ${r.data.job_id})` : ""}.`,
      };
    });
  }

  /** A confirmation page: what will happen, and the one button that does it. */
  function confirm(a: PageAction, o: { title: string; warning: string; button: string }) {
    page(kit, router, a.path, async (req, res, api) => {
      const s = await detailOf(api, String(req.params.id));
      kit.render(
        res,
        o.title,
        html`${serviceTabs(res, s, "")}${
          may(sessionOf(res), a)
            ? html`<p class="warning"><strong>${o.warning}</strong></p>
<form method="post" action="/portal${req.path}">${formTokens(sessionOf(res).csrfToken)}
<button type="submit" class="danger">${o.button}</button> <a href="${copies(req)}">Cancel</a></form>`
            : notYours(o.title)
        }`,
      );
    });
  }
  confirm(ACT.revert, {
    title: "Revert to the snapshot",
    warning: "The disk goes back to the snapshot: everything written since is lost.",
    button: "Revert the disk",
  });
  confirm(ACT.deleteSnapshot, {
    title: "Delete the snapshot",
    warning: "The snapshot is deleted for good.",
    button: "Delete the snapshot",
  });
  confirm(ACT.restore, {
    title: "Restore the backup",
    warning: "The disk is replaced by the backup: everything written since is lost.",
    button: "Restore the backup",
  });
  const copyParams = (req: Request) => ({ id: String(req.params.id), copyId: String(req.params.copyId) });
  action(kit, router, ACT.revert, { back: copies }, async (req, _res, api, token) => {
    const r = await api<{ job_id?: string }>(OPS.revert, { params: copyParams(req), token });
    return r.data.job_id
      ? toJob(r as { data: { job_id: string } }, "Revert")
      : { location: copies(req), notice: "Revert started." };
  });
  action(kit, router, ACT.deleteSnapshot, { back: copies }, async (req, _res, api, token) => {
    await api(OPS.deleteSnapshot, { params: copyParams(req), token });
    return { location: copies(req), notice: "The snapshot is deleted." };
  });
  action(kit, router, ACT.restore, { back: copies }, async (req, _res, api, token) => {
    const r = await api<{ job_id?: string }>(OPS.restore, { params: copyParams(req), token });
    return r.data.job_id
      ? toJob(r as { data: { job_id: string } }, "Restore")
      : { location: copies(req), notice: "Restore started." };
  });
}

/** A machine's snapshots or backups: the same columns, each row's own actions. */
function copiesTable<
  C extends { id: string; name: string; status: string; size_gb: number; created_at: string },
>(title: "Snapshots" | "Backups", copies: readonly C[], actions: (c: C) => Html | string) {
  return table(
    title,
    ["Name", "Status", "Size", "Taken", "Actions"],
    copies.map((c) => [c.name, badge(c.status), `${c.size_gb} GB`, at(c.created_at), actions(c)]),
    `No ${title.toLowerCase()} yet.`,
  );
}
