import type { Request, Response, Router } from "express";
import type { z } from "zod";
import type { osImages } from "../../../wire/machine.ts";
import { field } from "../../forms.ts";
import { type Html, html } from "../../html.ts";
import { sessionOf } from "../../session.ts";
import { type PageApi, Refused } from "../api.ts";
import { action, bodyText, fieldErrors, type Kit, page } from "../kit.ts";
import { may } from "../page-table.ts";
import { formTokens } from "../ui.ts";
import {
  ACT,
  attempt,
  back,
  detailOf,
  kindOf,
  nameOf,
  notYours,
  OPS,
  serviceTabs,
  svcBase,
  toJob,
} from "./table.ts";

type FormState = { values: Record<string, string>; errors: Record<string, string>; general?: string };

/** The box a form that erases a disk carries; unticked, nothing is sent to the API. */
function eraseBox(f: FormState, label: string): Html {
  return html`<div class="field"><input type="checkbox" id="f-confirm" name="confirm" value="yes" required${f.errors.confirm ? html` aria-invalid="true" aria-describedby="f-confirm-error"` : ""}> <label for="f-confirm">${label}</label>
${f.errors.confirm ? html`<p class="error" id="f-confirm-error">${f.errors.confirm}</p>` : ""}</div>`;
}

/** Refuses a form whose erase box is not ticked, beside the box (the API is not asked). */
function requireErase(req: Request, what: string): void {
  if (bodyText(req, "confirm") === "yes") return;
  throw new Refused(400, {
    success: false,
    code: "VALIDATION_ERROR",
    error: `Confirm the ${what}`,
    details: [{ field: "confirm", message: "Tick the box to confirm that the disk is erased" }],
  });
}

/** Reinstall and root password: the forms are the confirmation. */
export function reinstallRoutes(kit: Kit, router: Router): void {
  // Reinstall: the image chooser and the password, with the warning; the form is the confirmation.
  async function reinstallPage(req: Request, res: Response, api: PageApi, f: FormState, status = 200) {
    const s = await detailOf(api, String(req.params.id));
    const kind = kindOf(s);
    const images =
      kind === "other"
        ? { value: { images: [] as { id: string; name: string }[] } }
        : await attempt(
            api<z.infer<typeof osImages>>(kind === "vps" ? OPS.vpsImages : OPS.dedicatedImages, {
              params: { id: s.id },
            }),
          );
    const list = images.value?.images ?? [];
    const chosen = f.values.image ?? "";
    const csrf = sessionOf(res).csrfToken;
    const body = html`${serviceTabs(res, s, `${svcBase(s.id)}/reinstall`)}
<p class="warning"><strong>Reinstalling erases the disk.</strong> Everything on ${s.hostname || s.name} is lost; the machine is rebuilt from the image you choose.</p>
${f.general ? html`<p class="error" role="alert" id="form-error">${f.general}</p>` : ""}
<form method="post" action="${svcBase(s.id)}/reinstall" novalidate>
${formTokens(csrf)}
<fieldset class="field${f.errors.image ? " invalid" : ""}"><legend>Operating system image</legend>
${
  list.length
    ? list.map(
        (i, n) =>
          html`<div><input type="radio" id="img-${n}" name="image" value="${i.id}"${chosen === i.id || (!chosen && n === 0) ? html` checked` : ""}${f.errors.image && n === 0 ? html` aria-invalid="true" aria-describedby="f-image-error"` : ""}> <label for="img-${n}">${i.name}</label></div>`,
      )
    : kind === "other"
      ? html`<div><label for="f-image">Image id</label><input id="f-image" name="image" value="${chosen}"></div>`
      : html`<p class="empty">${images.refused ?? "No image is enabled for this plan."}</p>`
}
${f.errors.image ? html`<p class="error" id="f-image-error">${f.errors.image}</p>` : ""}
</fieldset>
${kind === "dedicated" ? "" : field(f, "password", "New root password", { type: "password", autocomplete: "new-password", hint: "At least 8 characters." })}
${eraseBox(f, "I understand that every file on this machine is erased")}
<button type="submit" class="danger">Reinstall and erase the disk</button> <a href="${svcBase(s.id)}">Cancel</a>
</form>`;
    kit.render(
      res,
      `Reinstall ${s.hostname || s.name}`,
      may(sessionOf(res), ACT.reinstall) ? body : html`${serviceTabs(res, s, "")}${notYours("Reinstalling")}`,
      { status },
    );
  }
  page(kit, router, "/services/:id/reinstall", (req, res, api) =>
    reinstallPage(req, res, api, { values: {}, errors: {} }),
  );
  action(
    kit,
    router,
    ACT.reinstall,
    {
      back,
      form: async (req, res, err, api) => {
        await reinstallPage(
          req,
          res,
          api,
          fieldErrors(
            err,
            { image: bodyText(req, "image") },
            { image_id: "image", osImageId: "image", password: "password" },
          ),
          err.status,
        );
        return true;
      },
    },
    async (req, _res, api, token) => {
      const id = String(req.params.id);
      requireErase(req, "reinstall");
      const s = await detailOf(api, id);
      const kind = kindOf(s);
      const image = bodyText(req, "image");
      const password = bodyText(req, "password");
      const r =
        kind === "vps"
          ? await api<{ job_id: string }>(OPS.vpsReinstall, {
              params: { id },
              body: { image_id: image, password },
              token,
            })
          : kind === "dedicated"
            ? await api<{ job_id: string }>(OPS.dedicatedReinstall, {
                params: { id },
                body: { osImageId: image },
                token,
              })
            : await api<{ job_id: string }>(OPS.reinstall, {
                params: { id },
                body: { image_id: image, ...(password ? { password } : {}) },
                token,
              });
      return toJob(r, "Reinstall");
    },
  );

  async function passwordPage(req: Request, res: Response, api: PageApi, f: FormState, status = 200) {
    const s = await detailOf(api, String(req.params.id));
    // A dedicated server's new root password is a rebuild (the API's route starts a reinstall
    // job): said, and confirmed like Reinstall.
    const rebuild = kindOf(s) === "dedicated";
    const form = html`${
      rebuild
        ? html`<p class="warning"><strong>On a dedicated server this starts a reinstall job: ${nameOf(s)} is rebuilt and its disk erased.</strong> Leave the password empty to get a generated one.</p>`
        : html`<p>Sets a new root password on ${nameOf(s)}. ${s.kind === "vps" ? "The machine must be running." : ""}</p>`
    }
${f.general ? html`<p class="error" role="alert" id="form-error">${f.general}</p>` : ""}
<form method="post" action="${svcBase(s.id)}/password" novalidate>
${formTokens(sessionOf(res).csrfToken)}
${field(f, "password", "New root password", { type: "password", required: !rebuild, autocomplete: "new-password", hint: "8 to 128 characters." })}
${rebuild ? eraseBox(f, "I understand that this reinstalls the server and erases its disk") : ""}
<button type="submit"${rebuild ? html` class="danger"` : ""}>${rebuild ? "Reinstall with a new root password" : "Set the password"}</button> <a href="${svcBase(s.id)}">Cancel</a>
</form>`;
    const body = html`${serviceTabs(res, s, `${svcBase(s.id)}/password`)}
${may(sessionOf(res), ACT.password) ? form : notYours("Setting the root password")}`;
    kit.render(res, `Root password of ${nameOf(s)}`, body, { status });
  }
  page(kit, router, "/services/:id/password", (req, res, api) =>
    passwordPage(req, res, api, { values: {}, errors: {} }),
  );
  action(
    kit,
    router,
    ACT.password,
    {
      back,
      form: async (req, res, err, api) => {
        await passwordPage(req, res, api, fieldErrors(err, {}), err.status);
        return true;
      },
    },
    async (req, _res, api, token) => {
      const id = String(req.params.id);
      const s = await detailOf(api, id);
      const kind = kindOf(s);
      const password = bodyText(req, "password");
      if (kind === "dedicated") requireErase(req, "reinstall");
      const op =
        kind === "vps" ? OPS.vpsPassword : kind === "dedicated" ? OPS.dedicatedPassword : OPS.password;
      return toJob(
        await api<{ job_id: string }>(op, {
          params: { id },
          // A dedicated server without a typed password gets a generated one (the API's rule).
          body: kind === "dedicated" && !password ? {} : { password },
          token,
        }),
        kind === "dedicated" ? "Reinstall with a new root password" : "Password reset",
      );
    },
  );
}
