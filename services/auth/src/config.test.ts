import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { loadAuthConfig } from "./config.ts";

const randomPepper = () => randomBytes(32).toString("base64");
// Auth serves over mutual TLS, so its configuration always names its certificate files.
const tls = { TLS_CA: "/certs/ca.crt", TLS_CERT: "/certs/tls.crt", TLS_KEY: "/certs/tls.key" };
const production = (env: Record<string, string>) => () =>
  loadAuthConfig({ NODE_ENV: "production", ...tls, ...env });

describe("auth configuration in production", () => {
  it("refuses the development default pepper", () => {
    assert.throws(production({}), /KEY_PEPPER: looks like a placeholder/);
  });

  it("refuses a placeholder pepper copied from an example, whatever its length", () => {
    // The pepper the former example Secret carried: 35 characters, and accepted before.
    assert.throws(
      production({ KEY_PEPPER: "change-me-to-32-random-bytes-base64" }),
      /KEY_PEPPER: looks like a placeholder/,
    );
  });

  it("refuses a pepper shorter than 32 characters", () => {
    assert.throws(
      production({ KEY_PEPPER: randomPepper().slice(0, 24) }),
      /KEY_PEPPER: must be at least 32 characters/,
    );
  });

  it("refuses a database password left at a placeholder", () => {
    const env = {
      KEY_PEPPER: randomPepper(),
      DATABASE_URL: "postgres://hosting:change-me@postgres-rw:5432/hosting",
    };
    assert.throws(production(env), /DATABASE_URL: its password looks like a placeholder/);
  });

  it("never echoes the refused secret", () => {
    const pepper = "short-but-unique-q7Zr";
    assert.throws(production({ KEY_PEPPER: pepper }), (err: Error) => !err.message.includes(pepper));
  });

  it("accepts a random pepper and a database URL with a random password", () => {
    const password = encodeURIComponent(randomBytes(24).toString("base64"));
    const cfg = loadAuthConfig({
      ...tls,
      NODE_ENV: "production",
      KEY_PEPPER: randomPepper(),
      DATABASE_URL: `postgres://hosting:${password}@postgres-rw:5432/hosting`,
    });
    assert.equal(cfg.NODE_ENV, "production");
  });

  it("accepts the development default outside production", () => {
    assert.equal(loadAuthConfig(tls).KEY_PEPPER, "development-pepper-change-me");
  });
});
