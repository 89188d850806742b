/**
 * The portal's usage history charts, the Jobs list's service column and filters, and a dedicated
 * server's provisioning status in words, as a browser without JavaScript receives them.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { api, auth, GATEWAY, newMachine } from "./helpers.ts";
import { fitsWidth, portalOwner, signIn, signInVisitor } from "./portal-pages.ts";
import { assertAccessible, browserMissing, launchBrowser } from "./support/browser.ts";
import { serviceSql } from "./support/service-db.ts";

const db = serviceSql("compute");
after(() => db.end({ timeout: 5 }));

/**
 * Three readings two hours back in a tier (the day's, 300 s, unless told): 40% processor, 2 of 4 GB
 * memory, 8 Mbit/s in.
 */
const usageBucket = (serviceId: string, stepS = 300) => db`
  insert into compute.usage_buckets (service_id, step_s, bucket_at, samples, cpu_percent_sum,
    memory_used_mb_sum, memory_total_mb, disk_used_gb_sum, disk_total_gb, net_samples, rx_bps_sum, tx_bps_sum)
  values (${serviceId}, ${stepS}, to_timestamp(floor((extract(epoch from now()) - 7200) / ${stepS}) * ${stepS}),
    3, 120, 6144, 4096, 30, 80, 3, 3000000, 750000)`;

async function ownerWithMachine(kind: "vps" | "dedicated" = "vps", state: "running" | "stopped" = "running") {
  const owner = await portalOwner();
  const id = await newMachine(
    { customerId: owner.customerId, ownerId: owner.ownerId, key: "", keyId: "" },
    { kind, state },
  );
  const [m] = await db<
    { hostname: string }[]
  >`select hostname from compute.machines where service_id = ${id}`;
  return { owner, id, hostname: m?.hostname ?? "", v: await signInVisitor(GATEWAY, "portal", owner.email) };
}

describe("usage history on the service page", () => {
  it("draws each metric as an SVG image with a title, a description and a table of its figures, in human units", async () => {
    // Stopped: compute's own readings of it (0% processor, no memory) leave the hand-placed averages as they are.
    const { id, v } = await ownerWithMachine("vps", "stopped");
    await usageBucket(id);
    const page = await v.get(`/portal/services/${id}?range=24h`);
    assert.equal(page.status, 200);
    const section = /<section id="usage-history"[\s\S]*?<\/section>/.exec(page.text)?.[0] ?? "";
    assert.ok(section, "the usage history section is on the page");
    const svgs = [
      ...section.matchAll(
        /<svg role="img" aria-labelledby="([^"]+)" aria-describedby="([^"]+)"[\s\S]*?<\/svg>/g,
      ),
    ];
    assert.equal(svgs.length, 4, "processor, memory, disk and network");
    for (const [svg, titleId, descId] of svgs) {
      assert.match(svg, new RegExp(`<title id="${titleId}">[^<]+, last 24 hours</title>`));
      assert.match(svg, new RegExp(`<desc id="${descId}">[^<]*average[^<]*</desc>`));
      assert.match(svg, /<(polyline points="[\d.,\s]+"|circle cx="[\d.]+" cy="[\d.]+")/);
    }
    // The figures in words and units a person reads: 40%, 2.00 GB of memory, 8.00 Mbit/s in.
    assert.match(section, /<title id="usage-cpu-title">Processor \(%\), last 24 hours<\/title>/);
    assert.match(section, /<desc id="usage-cpu-desc">Used: average [\d.]+%, peak 40.0% at /);
    assert.match(section, /<desc id="usage-memory-desc">Used: average [\d.]+ GB, peak 2.00 GB/);
    assert.match(section, /<desc id="usage-network-desc">In: [^<]*peak 8.00 Mbit\/s[^<]*Out: /);
    // Each chart's table fallback, with a caption and column headers.
    const tables = [...section.matchAll(/<details><summary>[^<]+<\/summary>[\s\S]*?<\/details>/g)];
    assert.equal(tables.length, 4);
    assert.match(tables[0]?.[0] ?? "", /<caption class="sr">Processor \(%\), last 24 hours<\/caption>/);
    assert.match(tables[0]?.[0] ?? "", /<th scope="col">Used \(%\)<\/th>/);
    assert.match(tables[3]?.[0] ?? "", /<td>8.00 Mbit\/s<\/td><td>2.00 Mbit\/s<\/td>/);
    // The range links, the chosen one marked for assistive technology.
    assert.match(section, /<nav aria-label="Usage history range">/);
    assert.match(section, /href="\/portal\/services\/[^"]+\?range=24h#usage-history" aria-current="page"/);
    // The range is the API's: the last hour has no reading two hours old.
    const hour = await v.get(`/portal/services/${id}?range=1h`);
    assert.doesNotMatch(hour.text, /peak 40.0%/);
    // An unknown range shows the default (a day), never a refusal.
    assert.match((await v.get(`/portal/services/${id}?range=2y`)).text, /peak 40.0%/);
  });
});

describe("usage charts in a browser", { skip: browserMissing() }, () => {
  it("are images named by their titles, pass axe-core and fit 1280 and 390 px", async () => {
    const { owner, id } = await ownerWithMachine("vps", "stopped");
    // In the week's tier (1800 s), which the page's 7-day range reads: without it the charts waited
    // on compute's sampler to record the machine, which CI's load once delayed past the page load.
    await usageBucket(id, 1800);
    const browser = await launchBrowser();
    try {
      for (const width of [1280, 390]) {
        const { page } = await browser.newPage(width);
        await signIn(page, "portal", owner.email);
        await page.goto(`${GATEWAY}/portal/services/${id}?range=7d`);
        await page
          .getByRole("img", { name: "Network (Mbit/s), last 7 days" })
          .waitFor()
          .catch(async (err: unknown) => {
            // The main part, whitespace collapsed: CI's first report was the layout's indentation.
            const shown = (
              await page
                .locator("main")
                .textContent()
                .catch((e: unknown) => `(no main: ${String(e).split("\n")[0]})`)
            )
              ?.replace(/\s+/g, " ")
              .slice(0, 1500);
            throw new Error(
              `${String(err).split("\n")[0]} at ${width} px, ${page.url()}; its main part:\n${shown}`,
            );
          });
        assert.equal(await page.getByRole("img", { name: /, last 7 days$/ }).count(), 4);
        assert.equal(await fitsWidth(page), true, `fits ${width} px`);
        await assertAccessible(page);
      }
    } finally {
      await browser.close();
    }
  });
});

describe("the Jobs list names services", () => {
  it("has a Service column with the hostname, linked, and the API's service and action filters", async () => {
    const { owner, id, v } = await ownerWithMachine();
    const other = await newMachine({
      customerId: owner.customerId,
      ownerId: owner.ownerId,
      key: "",
      keyId: "",
    });
    // A reboot of each: jobs of two services.
    const { secretKey } = await auth.createKey({
      personId: owner.ownerId,
      label: "jobs",
      scopes: ["services", "read"],
      ipAllowlist: "",
    });
    for (const s of [id, other]) {
      const r = await api("POST", `/api/v1/vps/${s}/reboot`, { key: secretKey, body: {} });
      assert.ok(r.status === 200 || r.status === 202, r.text);
    }
    // The service's hostname as the API and the service page name it.
    const hostname = (await api("GET", `/api/v1/services/${id}`, { key: secretKey })).body.data.hostname;
    const list = await v.get("/portal/jobs");
    assert.match(list.text, /<th scope="col">Service<\/th>/);
    assert.ok(hostname);
    assert.ok(
      list.text.includes(`<a href="/portal/services/${id}">${hostname}</a>`),
      `${hostname}: ${/<table>[\s\S]*<\/table>/.exec(list.text)?.[0] ?? list.text}`,
    );
    // The filters the API has: by service (named by hostname) and by action.
    assert.match(list.text, new RegExp(`<option value="${id}">${hostname}</option>`));
    assert.match(list.text, /<select id="f-action" name="action">/);
    const mine = await v.get(`/portal/jobs?resource=${id}&action=reboot`);
    assert.ok(mine.text.includes(`/portal/services/${id}"`));
    assert.ok(
      !mine.text.includes(`<a href="/portal/services/${other}">`),
      "the other service's job is filtered out",
    );
    assert.match(
      (await v.get(`/portal/jobs?resource=${id}&action=reinstall`)).text,
      /No job matches these filters/,
    );
  });
});

describe("a dedicated server's provisioning status", () => {
  it("reads as words, not JSON", async () => {
    const { id, v } = await ownerWithMachine("dedicated");
    const page = await v.get(`/portal/services/${id}`);
    const dd = /<dt>Provisioning<\/dt><dd>([^<]*)<\/dd>/.exec(page.text)?.[1] ?? "";
    assert.match(dd, /^(Running|Being built|Stopped)[;:] /, dd);
    assert.doesNotMatch(dd, /[{}"]/);
  });
});
