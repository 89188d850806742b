import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { html } from "./html.ts";

describe("html", () => {
  it("escapes interpolated text, including attribute quotes", () => {
    const label = `<script>alert("x")</script>' onload='`;
    assert.equal(
      html`<p title="${label}">${label}</p>`.text,
      `<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;</p>`,
    );
  });
  it("keeps nested templates and joins arrays; nothing for empty values", () => {
    const items = ["a&b", "c"].map((x) => html`<li>${x}</li>`);
    assert.equal(
      html`<ul>${items}${null}${false}${undefined}</ul>`.text,
      "<ul><li>a&amp;b</li><li>c</li></ul>",
    );
  });
});
