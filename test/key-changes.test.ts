/**
 * Every change of what a gateway's key check reads (a key, a person, a customer) reaches the
 * gateways' key tables before the call that made it returns: the key's next request is answered
 * by the new state. The list below names every RPC of auth's staff, portal and account look-up definitions, so an
 * RPC added later fails this file until it is classed as a change with its own case here, or as
 * none.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AccountLookupService } from "@hb/contracts/hb/auth/v1/account_lookup_pb";
import { CustomerStatus } from "@hb/contracts/hb/auth/v1/accounts_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { PortalService } from "@hb/contracts/hb/auth/v1/portal_pb";
import { type Account, api, auth, grpc, newAccount, newMember, unique } from "./helpers.ts";

const portal = grpc([PortalService], "AUTH_ADDR");
const UUID = "01a2070d-89b7-7094-b1d2-cc98e6753b5b";

/** Each case makes its change and checks the key's very next request (no waiting: the change returned). */
const changes: Record<string, (acct: Account) => Promise<void>> = {
  async createKey(acct) {
    const { secretKey } = await auth.createKey({
      personId: acct.ownerId,
      label: "new",
      scopes: [],
      ipAllowlist: "",
    });
    assert.equal((await api("GET", "/api/v1/", { key: secretKey })).status, 200);
  },
  async updateKey(acct) {
    assert.equal((await api("GET", "/api/v1/", { key: acct.key })).status, 200);
    await auth.updateKey({ personId: acct.ownerId, keyId: acct.keyId, ipAllowlist: "203.0.113.7" });
    const r = await api("GET", "/api/v1/", { key: acct.key });
    assert.deepEqual([r.status, r.body.code], [403, "FORBIDDEN"]);
  },
  async revokeKey(acct) {
    assert.equal((await api("GET", "/api/v1/", { key: acct.key })).status, 200);
    await auth.revokeKey({ personId: acct.ownerId, keyId: acct.keyId });
    assert.equal((await api("GET", "/api/v1/", { key: acct.key })).status, 401);
  },
  async staffRevokeKey(acct) {
    const { staff } = await auth.createStaff({
      name: "Revoker",
      email: `${unique("revoker")}@example.test`,
      permissions: ["view_clients", "edit_clients"],
    });
    assert.equal((await api("GET", "/api/v1/", { key: acct.key })).status, 200);
    await auth.staffRevokeKey({ staffId: staff!.id, keyId: acct.keyId });
    assert.equal((await api("GET", "/api/v1/", { key: acct.key })).status, 401);
  },
  async setPermissions(acct) {
    const member = await newMember(acct.customerId, ["view_services", "power_services"], ["services"]);
    assert.equal((await api("GET", "/api/v1/services", { key: member.key })).status, 200);
    await auth.setPermissions({ personId: member.personId, permissions: [] });
    const r = await api("GET", "/api/v1/services", { key: member.key });
    assert.deepEqual([r.status, r.body.code], [403, "FORBIDDEN"]);
  },
  async removePerson(acct) {
    const member = await newMember(acct.customerId, ["view_services", "power_services"], ["services"]);
    assert.equal((await api("GET", "/api/v1/services", { key: member.key })).status, 200);
    await portal.removePerson({ personId: member.personId });
    // A removed person's keys are revoked: listing services and powering a machine both stop.
    assert.equal((await api("GET", "/api/v1/services", { key: member.key })).status, 401);
    assert.equal((await api("POST", `/api/v1/vps/${UUID}/reboot`, { key: member.key })).status, 401);
  },
  async setCustomerStatus(acct) {
    assert.equal((await api("POST", `/api/v1/vps/${UUID}/start`, { key: acct.key })).body.code, "NOT_FOUND");
    await auth.setCustomerStatus({ customerId: acct.customerId, status: CustomerStatus.SUSPENDED });
    const r = await api("POST", `/api/v1/vps/${UUID}/start`, { key: acct.key });
    assert.deepEqual([r.status, r.body.code], [403, "ACCOUNT_SUSPENDED"]);
    await auth.setCustomerStatus({ customerId: acct.customerId, status: CustomerStatus.ACTIVE });
    const back = await api("POST", `/api/v1/vps/${UUID}/start`, { key: acct.key });
    assert.deepEqual([back.status, back.body.code], [404, "NOT_FOUND"]);
  },
};

/** Changes of company settings: the table's settings part; a private stack tests them. */
const elsewhere: Record<string, string> = {
  updateSettings: "test/company-settings.suite.ts (switch, hourly limit, modules on the company-wide stack)",
};

/** RPCs that change nothing a key check reads, and why. */
const noKeyInput: Record<string, string> = {
  createCustomer: "a new customer has no keys",
  getCustomer: "read",
  listCustomers: "read",
  createPerson: "a new person has no keys",
  listKeys: "read",
  listRequestLog: "read",
  createStaff: "staff hold no API keys",
  staffListKeys: "read",
  staffListRequestLog: "read",
  createPartner: "partner status and secrets are checked by auth itself (signed routes)",
  setPartnerStatus: "partner status is checked by auth itself (signed routes)",
  rotatePartnerSecret: "the signing secret never leaves auth",
  getSettings: "read",
  createPasswordLink: "passwords are not part of a key check",
  setPassword: "passwords are not part of a key check (it ends the person's sessions instead)",
  signIn: "sessions only",
  getSession: "read",
  signOut: "sessions only",
  listStaff: "read",
  setStaffPermissions: "staff hold no API keys",
  listPartners: "read",
  lookupAccount: "read (billing's staff operations)",
  updateCustomer:
    "a key check reads a customer's status and currency, not its profile (name, e-mail, company, country)",
  beginStaffAction: "the staff audit log is not read by a key check",
  finishStaffAction: "the staff audit log is not read by a key check",
  listStaffActions: "read",
  searchPeople: "read (the support desk's search)",
};

describe("changes of keys, people and customers reach the gateway's key table", () => {
  it("classes every RPC of auth's staff, portal and account look-up definitions", () => {
    const rpcs = [...AuthStaffService.methods, ...PortalService.methods, ...AccountLookupService.methods]
      .map((m) => m.localName)
      .sort();
    const classed = [...Object.keys(changes), ...Object.keys(elsewhere), ...Object.keys(noKeyInput)].sort();
    assert.deepEqual(rpcs, classed);
  });

  for (const [rpc, change] of Object.entries(changes)) {
    it(`${rpc}: the key's next request through the gateway sees the change`, async () => {
      await change(await newAccount(["services"]));
    });
  }
});
