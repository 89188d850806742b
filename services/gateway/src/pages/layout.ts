import { type Html, html } from "./html.ts";

export interface NavItem {
  href: string;
  label: string;
}

export interface PageOptions {
  title: string;
  /** "Client portal" or "Admin panel". */
  area: string;
  body: Html;
  nav?: NavItem[];
  current?: string;
  /** Signed-in name and the sign-out form's action and CSRF token. */
  user?: { name: string; signOut: string; csrf: string };
  /** A one-line notice above the content (saved, revoked...). */
  notice?: string;
  /** A one-line error above the content (an action the API refused). */
  error?: string;
  /** A standing word about the account, on every page (a suspended account). */
  banner?: Html;
  /** A page's own assets beside the shared ones (the console's terminal), all served by the gateway. */
  assets?: PageAssets;
}

export interface PageAssets {
  scripts: string[];
  styles: string[];
}

export const STYLESHEET = "/assets/pages.css";
export const SCRIPT = "/assets/pages.js";
export const FAVICON = "/assets/favicon.svg";

/** The whole document: the shared stylesheet and script (and a page's own assets), all served by the gateway. */
export function page(o: PageOptions): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · ${o.area}</title>
<link rel="icon" href="${FAVICON}" type="image/svg+xml">
<link rel="stylesheet" href="${STYLESHEET}">
${(o.assets?.styles ?? []).map(
  (href) => html`<link rel="stylesheet" href="${href}">
`,
)}<script src="${SCRIPT}" defer></script>
${(o.assets?.scripts ?? []).map(
  (src) => html`<script src="${src}" defer></script>
`,
)}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">${o.area}</span>
  ${
    o.nav?.length
      ? html`<nav aria-label="Main"><ul>${o.nav.map(
          (n) =>
            html`<li><a href="${n.href}"${o.current === n.href ? html` aria-current="page"` : ""}>${n.label}</a></li>`,
        )}</ul></nav>`
      : ""
  }
  ${
    o.user
      ? html`<form method="post" action="${o.user.signOut}" class="sign-out">
      <input type="hidden" name="_csrf" value="${o.user.csrf}">
      <span>${o.user.name}</span> <button type="submit">Sign out</button></form>`
      : ""
  }
</header>
<main id="main" tabindex="-1">
${o.banner ? html`<p class="warning banner" role="note" id="account-banner">${o.banner}</p>` : ""}
<h1>${o.title}</h1>
${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ""}
${o.error ? html`<p class="error" role="alert" id="page-error">${o.error}</p>` : ""}
${o.body}
</main>
</body>
</html>`;
}
