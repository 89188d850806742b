/**
 * The operator's commands cannot put an account in a state the data does not allow: the checks are
 * in the backends' staff handlers, so the admin command, the admin panel and any other caller get
 * them. Credit only for a person of the customer named, currencies the platform bills in (upper-case
 * ISO 4217), a product only on a service of a customer paying in its currency, ISO 3166-1 countries.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { AccountLookupService } from "@hb/contracts/hb/auth/v1/account_lookup_pb";
import { ServiceStatus } from "@hb/contracts/hb/billing/v1/common_pb";
import { resolveError } from "@hb/platform";
import { adminEntry } from "../scripts/bundle-file.ts";
import {
  addCredit,
  api,
  auth,
  balanceOf,
  billing,
  cyclePrices,
  kindOf,
  newAccount,
  newProduct,
  unique,
} from "./helpers.ts";
import { stackClient } from "./support/clients.ts";

const admin = (...args: string[]) =>
  new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(process.execPath, [adminEntry(), ...args], { env: process.env }, (err, _stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stderr });
    });
  });

/** The refusal of a call: code, fields named and message. */
async function refused(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    const r = resolveError(err);
    return { code: r.code, message: r.message, fields: r.info?.violations.map((v) => v.field) ?? [] };
  }
  assert.fail("the call was accepted");
}

describe("operator commands keep the data as it must be", () => {
  it("credit add refuses a person outside the customer named, from the command and over gRPC", async () => {
    const a = await newAccount();
    const stranger = await newAccount();
    const r = await admin(
      "credit",
      "add",
      "--person",
      stranger.ownerId,
      "--customer",
      a.customerId,
      "--amount",
      "100",
    );
    assert.equal(r.code, 1, r.stderr);
    const body = JSON.parse(r.stderr.trim().split("\n").at(-1) ?? "");
    assert.equal(body.code, "BAD_REQUEST");
    assert.match(body.error, new RegExp(`^--person must name a person of customer ${a.customerId}`));
    assert.deepEqual(
      body.details.map((d: { field: string }) => d.field),
      ["--person"],
    );
    const direct = await refused(
      billing.adminAdjustCredit({
        personId: stranger.ownerId,
        customerId: a.customerId,
        amount: "5",
        currency: "EUR",
      }),
    );
    assert.deepEqual([direct.code, direct.fields], ["BAD_REQUEST", ["person_id"]]);
    assert.equal(await balanceOf(stranger.key), 0);
    // The account's own owner is credited.
    await addCredit(a, "7");
    assert.equal(await balanceOf(a.key), 7);
  });

  it("credit is in the account's own currency only", async () => {
    const usd = await newAccount(undefined, { currency: "USD" });
    const r = await refused(
      billing.adminAdjustCredit({
        personId: usd.ownerId,
        customerId: usd.customerId,
        amount: "5",
        currency: "EUR",
      }),
    );
    assert.deepEqual([r.code, r.fields], ["BAD_REQUEST", ["currency"]]);
    assert.match(r.message, /USD/);
  });

  it("products refuse a lower-case or unknown currency, naming it", async () => {
    const product = (currency: string) =>
      billing.adminCreateProduct({
        name: unique("plan"),
        kind: kindOf("vps"),
        prices: cyclePrices({ monthly: "10" }, currency),
        currency,
      });
    const lower = await refused(product("eur"));
    assert.deepEqual([lower.code, lower.fields], ["BAD_REQUEST", ["currency"]]);
    assert.match(lower.message, /upper-case ISO 4217 code: EUR, not eur/);
    for (const code of ["XYZ", "EU", "EURO"]) {
      const unknown = await refused(product(code));
      assert.deepEqual([unknown.code, unknown.fields], ["BAD_REQUEST", ["currency"]], code);
      assert.match(unknown.message, /EUR, USD, GBP/);
    }
    const cli = await admin(
      "product",
      "create",
      "--name",
      unique("cli plan"),
      "--prices",
      "monthly=5",
      "--currency",
      "usd",
    );
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stderr, /--currency must be an upper-case ISO 4217 code: USD, not usd/);
    assert.ok((await product("GBP")).product?.id, "a billed currency is accepted");
  });

  it("a product priced in EUR cannot be attached to a USD customer's service or order", async () => {
    const usd = await newAccount(undefined, { currency: "USD" });
    const eurProduct = await newProduct("vps", { monthly: "10" }, "EUR");
    const r = await refused(
      billing.adminCreateService({
        customerId: usd.customerId,
        productId: eurProduct.id,
        kind: kindOf("vps"),
        status: ServiceStatus.ACTIVE,
      }),
    );
    assert.deepEqual([r.code, r.fields], ["BAD_REQUEST", ["product_id"]]);
    assert.match(r.message, /priced in EUR; the customer pays in USD/);
    const listed = await api("GET", "/api/v1/services", { key: usd.key });
    assert.equal(listed.body.data.services.length, 0, listed.text);
    const order = await api("POST", "/api/v1/orders", {
      key: usd.key,
      body: { productId: eurProduct.id, billingCycle: "monthly" },
    });
    assert.equal(order.status, 400, order.text);
    // In its own currency it is fine.
    const usdProduct = await newProduct("vps", { monthly: "10" }, "USD");
    const ok = await billing.adminCreateService({
      customerId: usd.customerId,
      productId: usdProduct.id,
      kind: kindOf("vps"),
      status: ServiceStatus.ACTIVE,
    });
    assert.equal(ok.service?.billing?.price?.currency, "USD");
  });

  it("a customer's country is an ISO 3166-1 alpha-2 code, and its currency one the platform bills in", async () => {
    const customer = (country: string, currency = "EUR") =>
      auth.createCustomer({ name: "C", email: `${unique("c")}@example.test`, country, currency });
    for (const country of ["ZZZ", "ZZ", "XK", "D", "Deutschland"]) {
      const r = await refused(customer(country));
      assert.deepEqual([r.code, r.fields], ["BAD_REQUEST", ["country"]], country);
      assert.match(r.message, /ISO 3166-1 alpha-2/);
    }
    const cli = await admin(
      "customer",
      "create",
      "--name",
      "Z",
      "--email",
      `${unique("z")}@example.test`,
      "--country",
      "ZZZ",
    );
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stderr, /--country must be an ISO 3166-1 alpha-2 country code/);
    assert.equal((await customer("de")).customer?.country, "DE");
    assert.equal((await customer("")).customer?.country, "");
    const xyz = await refused(customer("DE", "XYZ"));
    assert.deepEqual([xyz.code, xyz.fields], ["BAD_REQUEST", ["currency"]]);
  });

  it("only billing may look an account up in auth", async () => {
    const a = await newAccount();
    for (const as of ["gateway", "admin", "admin-panel", "compute", "webhooks"] as const) {
      const c = stackClient(process.env, [AccountLookupService], "AUTH_ADDR", 10_000, as);
      try {
        const r = await refused(c.client.lookupAccount({ customerId: a.customerId, personId: a.ownerId }));
        assert.equal(r.code, "FORBIDDEN", as);
      } finally {
        c.close();
      }
    }
    const asBilling = stackClient(process.env, [AccountLookupService], "AUTH_ADDR", 10_000, "billing");
    try {
      const r = await asBilling.client.lookupAccount({ customerId: a.customerId, personId: a.ownerId });
      assert.equal(r.customer?.currency, "EUR");
      assert.equal(r.person?.id, a.ownerId);
    } finally {
      asBilling.close();
    }
  });
});
