import { isUuid } from "@hb/platform";
import { PAGE_SIZE } from "@hb/platform/paging";
import type { Request, Response, Router } from "express";
import type { z } from "zod";
import type { job, jobList } from "../../wire/job.ts";
import type { serviceList } from "../../wire/service.ts";
import type { sshKey, sshKeyList } from "../../wire/ssh-key.ts";
import { field } from "../forms.ts";
import { html } from "../html.ts";
import { sessionOf } from "../session.ts";
import { operation, type PageApi, pageApi, Refused } from "./api.ts";
import { action, bodyText, doneOf, fieldErrors, type Kit, page } from "./kit.ts";
import { may, pageAction } from "./page-table.ts";
import { at, badge, facts, formTokens, pageParam, pager, table } from "./ui.ts";

type Job = z.infer<typeof job>;

const OPS = {
  jobs: operation("GET", "/jobs", "/portal/jobs"),
  services: operation("GET", "/services", "/portal/jobs (the service filter)"),
  job: operation("GET", "/jobs/:id", "/portal/jobs/:id"),
  sshKeys: operation("GET", "/ssh-keys", "/portal/ssh-keys"),
  addSshKey: operation("POST", "/ssh-keys", "/portal/ssh-keys"),
  deleteSshKey: operation("DELETE", "/ssh-keys/:id", "/portal/ssh-keys/:id/delete"),
};

const ACT = {
  addSshKey: pageAction({ path: "/ssh-keys", ops: [OPS.addSshKey], redirect: "/portal/ssh-keys" }),
  deleteSshKey: pageAction({
    path: "/ssh-keys/:id/delete",
    ops: [OPS.deleteSshKey],
    redirect: "/portal/ssh-keys",
  }),
};

const JOB_STATES = ["running", "succeeded", "failed"];
/** The actions a job may be for, as the API's ?action= filter takes them; provider actions are an open set. */
const JOB_ACTIONS = [
  "build",
  "reinstall",
  "password",
  "start",
  "stop",
  "shutdown",
  "reboot",
  "restart",
  "poweroff",
  "on",
  "off",
  "snapshot_create",
  "snapshot_revert",
  "backup_create",
  "backup_restore",
];
/** The service a job acts on, by its hostname, linked to the service's page. */
const serviceLink = (j: Job, name?: string) =>
  html`<a href="/portal/services/${j.resource.id}">${name || j.resource.hostname || j.resource.id}</a>`;
const select = (
  id: string,
  name: string,
  label: string,
  any: string,
  options: [string, string][],
  chosen: string,
) =>
  html`<div class="field"><label for="${id}">${label}</label><select id="${id}" name="${name}"><option value="">${any}</option>${options.map(([v, text]) => html`<option value="${v}"${v === chosen ? html` selected` : ""}>${text}</option>`)}</select></div>`;

/** The facts of a job; the live view (pages.js) replaces them while it runs. */
const jobFacts = (j: Job) =>
  facts([
    ["Action", j.action],
    ["Status", badge(j.status)],
    [
      "Progress",
      html`<progress max="100" value="${j.progress}" aria-label="Progress">${j.progress}%</progress> ${j.progress}%`,
    ],
    ["Service", serviceLink(j)],
    ["Started", at(j.started_at)],
    ["Finished", at(j.finished_at)],
    ["Error", j.error ? `${j.error.code}: ${j.error.message}` : undefined],
  ]);

export function machineRoutes(kit: Kit, router: Router): void {
  page(kit, router, "/jobs", async (req, res, api) => {
    const state =
      typeof req.query.state === "string" && JOB_STATES.includes(req.query.state) ? req.query.state : "";
    const resource =
      typeof req.query.resource === "string" && isUuid(req.query.resource) ? req.query.resource : "";
    const action =
      typeof req.query.action === "string" && JOB_ACTIONS.includes(req.query.action) ? req.query.action : "";
    const [r, services] = await Promise.all([
      api<z.infer<typeof jobList>>(OPS.jobs, {
        query: { page: pageParam(req.query.page), limit: PAGE_SIZE.default, state, resource, action },
      }),
      // The service filter's choices: the customer's services by hostname (the first 200).
      api<z.infer<typeof serviceList>>(OPS.services, { query: { limit: PAGE_SIZE.max } }),
    ]);
    const filters = {
      ...(state ? { state } : {}),
      ...(resource ? { resource } : {}),
      ...(action ? { action } : {}),
    };
    const choices: [string, string][] = services.data.services.map((x) => [
      x.id,
      x.hostname || x.name || x.id,
    ]);
    if (resource && !choices.some(([v]) => v === resource)) choices.push([resource, resource]);
    // The list names a service as its filter does (billing's hostname), the job's own where it is not listed.
    const names = new Map(choices);
    const body = html`<form method="get" action="/portal/jobs" class="filters">
${select(
  "f-state",
  "state",
  "Status",
  "Any status",
  JOB_STATES.map((x) => [x, x]),
  state,
)}
${select("f-resource", "resource", "Service", "Any service", choices, resource)}
${select(
  "f-action",
  "action",
  "Action",
  "Any action",
  JOB_ACTIONS.map((x) => [x, x.replace("_", " ")]),
  action,
)}
<button type="submit">Filter</button></form>
${table(
  "Jobs",
  ["Action", "Service", "Status", "Progress", "Started", "Finished"],
  r.data.jobs.map((j) => [
    html`<a href="/portal/jobs/${j.id}">${j.action}</a>`,
    serviceLink(j, names.get(j.resource.id)),
    badge(j.status),
    `${j.progress}%`,
    at(j.started_at),
    at(j.finished_at),
  ]),
  state || resource || action
    ? "No job matches these filters."
    : "No jobs yet: power actions, reinstalls and password resets appear here.",
)}
${pager("/portal/jobs", r.data.pagination, filters)}`;
    kit.render(res, "Jobs", body, await doneOf(kit, req, res));
  });

  page(kit, router, "/jobs/:id", async (req, res, api) => {
    const j = (await api<Job>(OPS.job, { params: { id: String(req.params.id) } })).data;
    // data-job-poll: pages.js asks /portal/jobs/:id/status every second while the job runs and
    // replaces the facts, so the page follows the job without a reload.
    const body = html`<div id="job" data-job-poll="${j.status === "running" ? `/portal/jobs/${j.id}/status` : ""}" aria-live="polite">${jobFacts(j)}</div>
<p><a href="/portal/services/${j.resource.id}">Back to the service</a> · <a href="/portal/jobs">All jobs</a></p>`;
    kit.render(res, `Job: ${j.action}`, body, await doneOf(kit, req, res));
  });

  // The live view's source: the job's facts as an HTML fragment, and whether it still runs.
  router.get("/jobs/:id/status", async (req: Request, res: Response) => {
    try {
      const j = (await pageApi(kit.call, res)<Job>(OPS.job, { params: { id: String(req.params.id) } })).data;
      res.set("Cache-Control", "no-store").json({ running: j.status === "running", html: jobFacts(j).text });
    } catch (err) {
      const status = err instanceof Refused ? err.status : 500;
      res.status(status).json({ running: false, html: "" });
    }
  });

  async function keysPage(
    req: Request,
    res: Response,
    api: PageApi,
    f: { values: Record<string, string>; errors: Record<string, string>; general?: string },
    status?: number,
    created?: z.infer<typeof sshKey>,
  ) {
    const list = (await api<z.infer<typeof sshKeyList>>(OPS.sshKeys)).data.ssh_keys;
    const o = status ? { status } : await doneOf(kit, req, res);
    const body = html`${created ? html`<p class="notice" role="status">Key ${created.name} added; fingerprint <span class="mono">${created.fingerprint}</span>.</p>` : ""}
${table(
  "SSH keys",
  ["Name", "Fingerprint", "Added", ""],
  list.map((k) => [
    k.name,
    html`<span class="mono">${k.fingerprint}</span>`,
    at(k.created_at),
    may(sessionOf(res), ACT.deleteSshKey)
      ? html`<a href="/portal/ssh-keys/${k.id}/delete" aria-label="Delete ${k.name}">Delete</a>`
      : "",
  ]),
  "No SSH keys stored yet. Add one below to choose it when you order or reinstall.",
)}
${
  may(sessionOf(res), ACT.addSshKey)
    ? html`<h2>Add a key</h2>
${f.general ? html`<p class="error" role="alert" id="form-error">${f.general}</p>` : ""}
<form method="post" action="/portal/ssh-keys" novalidate>${formTokens(sessionOf(res).csrfToken)}
${field(f, "name", "Name", { required: true })}
${field(f, "publicKey", "Public key", { required: true, multiline: true, hint: "One line, as in ~/.ssh/id_ed25519.pub." })}
<button type="submit">Add the key</button></form>`
    : ""
}`;
    kit.render(res, "SSH keys", body, o);
  }
  page(kit, router, "/ssh-keys", (req, res, api) => keysPage(req, res, api, { values: {}, errors: {} }));
  action(
    kit,
    router,
    ACT.addSshKey,
    {
      back: () => "/portal/ssh-keys",
      form: async (req, res, err, api) => {
        await keysPage(
          req,
          res,
          api,
          fieldErrors(
            err,
            { name: bodyText(req, "name"), publicKey: bodyText(req, "publicKey") },
            { public_key: "publicKey" },
          ),
          err.status,
        );
        return true;
      },
    },
    async (req, _res, api, token) => {
      const k = (
        await api<z.infer<typeof sshKey>>(OPS.addSshKey, {
          body: { name: bodyText(req, "name"), publicKey: bodyText(req, "publicKey").trim() },
          token,
        })
      ).data;
      return {
        location: "/portal/ssh-keys",
        notice: `Key ${k.name} added; its fingerprint is ${k.fingerprint}.`,
      };
    },
  );
  page(kit, router, "/ssh-keys/:id/delete", async (req, res, api) => {
    const k = (await api<z.infer<typeof sshKeyList>>(OPS.sshKeys)).data.ssh_keys.find(
      (x) => x.id === req.params.id,
    );
    if (!k) throw new Refused(404, { success: false, code: "NOT_FOUND", error: "SSH key not found" });
    kit.render(
      res,
      `Delete SSH key ${k.name}`,
      html`<p class="mono">${k.fingerprint}</p>
${
  may(sessionOf(res), ACT.deleteSshKey)
    ? html`<p class="warning"><strong>The key is deleted from your stored keys.</strong> Machines that already have it keep it.</p>
<form method="post" action="/portal/ssh-keys/${k.id}/delete">${formTokens(sessionOf(res).csrfToken)}
<button type="submit" class="danger">Delete the key</button> <a href="/portal/ssh-keys">Keep it</a></form>`
    : html`<p class="empty" id="not-permitted">Deleting a key needs the manage permission on this account, and an account that is not suspended.</p>`
}`,
    );
  });
  action(kit, router, ACT.deleteSshKey, { back: () => "/portal/ssh-keys" }, async (req, _res, api, token) => {
    await api(OPS.deleteSshKey, { params: { id: String(req.params.id) }, token });
    return { location: "/portal/ssh-keys", notice: "The key is deleted." };
  });
}
