import { resolveError } from "@hb/platform";
import { newToken } from "./customer/once.ts";
import { type Html, html } from "./html.ts";

/** What was typed, and an error per field, so a refused form comes back as it was sent. */
export interface FormState {
  values: Record<string, string>;
  errors: Record<string, string>;
  /** An error that belongs to no single field. */
  general?: string;
}

export const emptyForm = (values: Record<string, string> = {}): FormState => ({ values, errors: {} });

/**
 * A service's refusal as form errors: each field violation goes beside its field (`fields` maps the
 * service's field names to the form's), anything else becomes the general error.
 */
export function formErrors(
  err: unknown,
  values: Record<string, string>,
  fields: Record<string, string> = {},
): FormState {
  const r = resolveError(err);
  if (r.status >= 500) throw err;
  const errors: Record<string, string> = {};
  for (const v of r.info?.violations ?? []) {
    const name = fields[v.field] ?? v.field;
    errors[name] = errors[name] ? `${errors[name]}; ${v.message}` : v.message;
  }
  const general = Object.keys(errors).length ? undefined : r.message;
  return { values, errors, general };
}

export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

/**
 * The hidden fields of an admin write form: the CSRF token and a one-time form token (once.ts), so
 * a double click, a reload of the POST or a resubmission acts once (admin-once.ts).
 */
export const formFields = (csrf: string) =>
  html`${csrfField(csrf)}<input type="hidden" name="_once" value="${newToken()}">`;

export function generalError(f: FormState): Html | string {
  return f.general ? html`<p class="error" role="alert" id="form-error">${f.general}</p>` : "";
}

interface FieldOptions {
  type?: string;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  multiline?: boolean;
  attrs?: Html;
}

/** A labelled input with its hint and its error beside it (aria-describedby points at both). */
export function field(f: FormState, name: string, label: string, o: FieldOptions = {}): Html {
  const id = `f-${name}`;
  const error = f.errors[name];
  const described = [o.hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  const common = html`id="${id}" name="${name}"${o.required ? html` required` : ""}${
    o.autocomplete ? html` autocomplete="${o.autocomplete}"` : ""
  }${described ? html` aria-describedby="${described}"` : ""}${error ? html` aria-invalid="true"` : ""}${o.attrs ?? ""}`;
  const value = f.values[name] ?? "";
  const control = o.multiline
    ? html`<textarea ${common} rows="3">${value}</textarea>`
    : html`<input type="${o.type ?? "text"}" ${common} value="${o.type === "password" ? "" : value}">`;
  return html`<div class="field${error ? " invalid" : ""}">
  <label for="${id}">${label}</label>
  ${o.hint ? html`<p class="hint" id="${id}-hint">${o.hint}</p>` : ""}
  ${control}
  ${error ? html`<p class="error" id="${id}-error">${error}</p>` : ""}
</div>`;
}

/** The checked permission boxes of a form (none, one or several `permissions` fields). */
export const checkedPermissions = (body: Record<string, unknown>): string[] =>
  [body.permissions ?? []].flat().map(String);

/** A new person's or staff member's form: what was typed, to show again if it is refused. */
export function personFormValues(body: Record<string, unknown>) {
  const permissions = checkedPermissions(body);
  return {
    permissions,
    values: {
      name: String(body.name ?? ""),
      email: String(body.email ?? ""),
      permissions: permissions.join(","),
    },
  };
}
