import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { ConnectError } from "@connectrpc/connect";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { TopUpService } from "@hb/contracts/hb/billing/v1/payments_pb";
import { resolveError } from "@hb/platform";
import { adminEntry } from "../scripts/bundle-file.ts";
import { auth, grpc, unique } from "./helpers.ts";

// The portal's calls to billing, made as the pages' identity.
const topUps = grpc([TopUpService], "BILLING_ADDR", "portal");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run admin -- ...args` as a child process against this run's stack (it inherits AUTH_ADDR etc.). */
const admin = (...args: string[]) =>
  new Promise<Run>((resolve) => {
    execFile(process.execPath, [adminEntry(), ...args], { env: process.env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });

/** A service's refusal as the command prints it: one JSON line on stderr. */
const refusal = (r: Run) =>
  JSON.parse(r.stderr.trim().split("\n").at(-1) ?? "") as {
    code: string;
    error: string;
    details?: { field: string; message: string }[];
  };

const rejectionCode = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ConnectError);
    return resolveError(err);
  }
  assert.fail("expected a refusal");
};

// Each child process costs about half a second, so the cases run side by side.
describe("the admin command", { concurrency: true }, () => {
  it("refuses an unknown flag with exit 2, naming it and the flag meant, and creates nothing", async () => {
    const { owner } = await auth.createCustomer({ name: "F", email: `${unique("flag")}@example.test` });
    const r = await admin("key", "create", "--person", owner!.id, "--label", "ci", "--scope", "orders");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Unknown flag --scope for "key create"\. Did you mean --scopes\?/);
    assert.equal(r.stdout, "");
    assert.deepEqual((await auth.listKeys({ personId: owner!.id })).keys, []);
  });

  it("refuses an unknown command with exit 2, naming it and the closest command", async () => {
    const r = await admin("custmer", "create", "--name", "A");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Unknown command "custmer create"\. Did you mean "customer create"\?/);
    assert.doesNotMatch(r.stderr, /key create/, "not the whole usage");
  });

  it("prints one command's usage for --help, made from its flags, with exit 0", async () => {
    const r = await admin("key", "create", "--help");
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: npm run admin -- key create --person ID --label L \[--scopes LIST\]/);
    assert.match(r.stdout, /--scopes LIST +comma-separated, of services,orders,billing,destructive,account/);
    assert.doesNotMatch(r.stdout, /customer create/);
  });

  it("lists every command for the tool's --help with exit 0", async () => {
    const r = await admin("--help");
    assert.equal(r.code, 0);
    for (const name of ["customer create", "key create", "webhooks settings set", "seed"]) {
      assert.match(r.stdout, new RegExp(`^  ${name} `, "m"));
    }
  });

  it("says a number flag's bad value is not a number, with exit 2", async () => {
    const r = await admin("product", "create", "--name", "X", "--prices", "monthly=1", "--vcpus", "two");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--vcpus takes a whole number; "two" is not a number/);
  });

  it("says a date flag's bad value is not a date, with exit 2, and creates nothing", async () => {
    const { owner } = await auth.createCustomer({ name: "D", email: `${unique("date")}@example.test` });
    for (const expires of ["2027-02-30", "tomorrow", "2027-1-1"]) {
      const r = await admin("key", "create", "--person", owner!.id, "--label", "ci", "--expires", expires);
      assert.equal(r.code, 2, expires);
      assert.match(
        r.stderr,
        new RegExp(`--expires takes a date written YYYY-MM-DD; "${expires}" is not one`),
      );
    }
    const past = await admin(
      "key",
      "create",
      "--person",
      owner!.id,
      "--label",
      "ci",
      "--expires",
      "2020-01-01",
    );
    assert.equal(past.code, 1);
    assert.equal(refusal(past).error, "--expires must be today or later");
    assert.deepEqual((await auth.listKeys({ personId: owner!.id })).keys, []);
  });

  it("names the flag the user typed when the service refuses a value, with exit 1", async () => {
    const r = await admin("settings", "set", "--hourly-limit", "0");
    assert.equal(r.code, 1);
    const body = refusal(r);
    assert.equal(body.code, "BAD_REQUEST");
    assert.match(body.error, /^--hourly-limit must be between 1 and 1000000$/);
    assert.deepEqual(
      body.details?.map((d) => d.field),
      ["--hourly-limit"],
    );
  });

  it("refuses a second customer with the same e-mail in other letter case (409 CONFLICT naming --email)", async () => {
    const email = `${unique("dup")}@example.test`;
    await auth.createCustomer({ name: "First", email });
    const r = await admin("customer", "create", "--name", "Second", "--email", email.toUpperCase());
    assert.equal(r.code, 1);
    const body = refusal(r);
    assert.equal(body.code, "CONFLICT");
    assert.deepEqual(
      body.details?.map((d) => d.field),
      ["--email"],
    );
    assert.equal((await auth.listCustomers({ email })).customers.length, 1);
  });

  it("lets exactly one of several concurrent sign-ups with one e-mail through", async () => {
    const email = `${unique("race")}@example.test`;
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => auth.createCustomer({ name: `R${i}`, email })),
    );
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
    for (const r of results) {
      if (r.status === "rejected") assert.equal(resolveError(r.reason).code, "CONFLICT");
    }
    assert.equal((await auth.listCustomers({ email })).customers.length, 1);
  });

  it("refuses a malformed e-mail address for a customer, a person and a staff member, naming the field", async () => {
    const r = await admin("customer", "create", "--name", "A", "--email", "ada.example.com");
    assert.equal(r.code, 1);
    const body = refusal(r);
    assert.equal(body.code, "BAD_REQUEST");
    assert.equal(body.error, "--email is not a valid e-mail address");
    assert.deepEqual(
      body.details?.map((d) => d.field),
      ["--email"],
    );

    const { customer } = await auth.createCustomer({ name: "P", email: `${unique("p")}@example.test` });
    const person = await rejectionCode(
      auth.createPerson({ customerId: customer!.id, name: "B", email: "bob@", permissions: [] }),
    );
    const staff = await rejectionCode(
      auth.createStaff({ name: "S", email: "sam at example.com", permissions: [] }),
    );
    for (const refused of [person, staff]) {
      assert.equal(refused.code, "BAD_REQUEST");
      assert.deepEqual(
        refused.info?.violations.map((v) => v.field),
        ["email"],
      );
    }
  });

  it("still prints JSON for customer create, key create and customer get", async () => {
    const created = await admin(
      "customer",
      "create",
      "--name",
      "Ada",
      "--email",
      `${unique("ada")}@example.test`,
    );
    assert.equal(created.code, 0, created.stderr);
    const { customer, owner } = JSON.parse(created.stdout) as {
      customer: { id: string };
      owner: { id: string };
    };

    const key = await admin(
      "key",
      "create",
      "--person",
      owner.id,
      "--label",
      "ci",
      "--scopes",
      "services,orders",
    );
    assert.equal(key.code, 0, key.stderr);
    const k = JSON.parse(key.stdout) as { secretKey: string; key: { scopes: string[] } };
    assert.ok(k.secretKey.length > 20);
    assert.deepEqual(k.key.scopes, ["read", "services", "orders"]);

    const got = await admin("customer", "get", customer.id);
    assert.equal(got.code, 0, got.stderr);
    const body = JSON.parse(got.stdout) as { customer: { id: string }; people: { id: string }[] };
    assert.equal(body.customer.id, customer.id);
    assert.deepEqual(
      body.people.map((p) => p.id),
      [owner.id],
    );
  });

  it("customer update changes only the flags given, and suspend and activate keep their reason", async () => {
    const email = `${unique("cli-upd")}@example.test`;
    const { customer } = await auth.createCustomer({
      name: "Before",
      email,
      company: "Old Co",
      country: "DE",
    });
    const id = customer!.id;
    const r = await admin("customer", "update", id, "--company", "New Co", "--country", "nl");
    assert.equal(r.code, 0, r.stderr);
    const got = (await auth.getCustomer({ customerId: id })).customer!;
    assert.deepEqual([got.name, got.email, got.company, got.country], ["Before", email, "New Co", "NL"]);
    const bad = await admin("customer", "update", id, "--country", "ZZ");
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /country/);

    const s = await admin("customer", "suspend", id, "--reason", "Unpaid since May");
    assert.equal(s.code, 0, s.stderr);
    assert.equal((await auth.getCustomer({ customerId: id })).customer!.statusReason, "Unpaid since May");
    const a = await admin("customer", "activate", id, "--reason", "Paid");
    assert.equal(a.code, 0, a.stderr);
    const after = (await auth.getCustomer({ customerId: id })).customer!;
    assert.deepEqual([after.status, after.statusReason], [CustomerStatus.ACTIVE, "Paid"]);
  });
});

// Apart from the suite above, after it: its cases start a dozen commands at once, and on a loaded
// machine three more pushed its direct calls past their deadline.
describe("the admin command with bank transfers", () => {
  it("lists a waiting bank transfer and confirms it once, the second confirmation refused 409", async () => {
    const { customer, owner } = await auth.createCustomer({
      name: "T",
      email: `${unique("transfer")}@example.test`,
      currency: "EUR",
    });
    const asked = await topUps.requestBankTransfer({
      caller: {
        customerId: customer!.id,
        personId: owner!.id,
        permissions: ["pay_invoices"],
        currency: "EUR",
      },
      amount: "80",
      idempotencyKey: unique("cli-transfer"),
    });
    const reference = asked.topUp!.reference;
    const listed = await admin("transfer", "list");
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(
      (JSON.parse(listed.stdout) as { reference: string }[]).some((t) => t.reference === reference),
      "listed while waiting",
    );
    const r = await admin("transfer", "confirm", reference.toLowerCase(), "--amount", "79.5");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).balance, "79.5000");
    const again = await admin("transfer", "confirm", reference, "--amount", "79.5");
    assert.equal(again.code, 1);
    assert.equal(refusal(again).code, "CONFLICT");
  });
});
