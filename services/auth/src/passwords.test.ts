import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hashPassword, verifyPassword } from "./passwords.ts";

describe("passwords", () => {
  it("accepts the password it hashed and refuses another", async () => {
    const stored = await hashPassword("correct horse battery");
    assert.match(stored, /^scrypt\$32768\$8\$1\$/);
    assert.equal(await verifyPassword("correct horse battery", stored), true);
    assert.equal(await verifyPassword("correct horse batterY", stored), false);
  });
  it("salts every hash", async () => {
    assert.notEqual(await hashPassword("same password!"), await hashPassword("same password!"));
  });
  it("never matches a malformed stored value", async () => {
    assert.equal(await verifyPassword("x", "plain"), false);
    assert.equal(await verifyPassword("x", "scrypt$1$1$1$$"), false);
  });
});
