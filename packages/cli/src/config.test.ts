import assert from "node:assert/strict";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { configPath, isExposed, readConfig, resolveContext, writeConfig } from "./config.ts";

const dir = await mkdtemp(path.join(tmpdir(), "hb-config-"));
after(() => rm(dir, { recursive: true, force: true }));

describe("the contexts file", () => {
  it("is written 0600 in a 0700 directory whatever the umask, and read back", async () => {
    const file = path.join(dir, "nested", "hb", "config.json");
    const old = process.umask(0o022);
    try {
      await writeConfig(file, { current: "a", contexts: { a: { apiUrl: "http://x/api/v1", apiKey: "k" } } });
    } finally {
      process.umask(old);
    }
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal((await stat(path.dirname(file))).mode & 0o777, 0o700);
    assert.equal(await isExposed(file), false);
    assert.deepEqual(await readConfig(file), {
      current: "a",
      contexts: { a: { apiUrl: "http://x/api/v1", apiKey: "k" } },
    });
  });

  it("is reported when others can read it, and is empty when missing", async () => {
    const file = path.join(dir, "loose.json");
    await writeFile(file, "{}", { mode: 0o644 });
    assert.equal(await isExposed(file), true);
    assert.deepEqual(await readConfig(path.join(dir, "absent.json")), { contexts: {} });
  });

  it("lives at HB_CONFIG, else under XDG_CONFIG_HOME, else ~/.config", () => {
    assert.equal(configPath({ HB_CONFIG: "/c.json", XDG_CONFIG_HOME: "/x" }), "/c.json");
    assert.equal(configPath({ XDG_CONFIG_HOME: "/x" }), "/x/hb/config.json");
    assert.match(configPath({}), /\.config\/hb\/config\.json$/);
  });
});

describe("which API a command uses", () => {
  const config = {
    current: "prod",
    contexts: {
      prod: { apiUrl: "https://prod", apiKey: "kp" },
      dev: { apiUrl: "http://dev", apiKey: "kd" },
    },
  };
  const env = { HB_API_URL: "http://env", HB_API_KEY: "ke" };

  it("is the named context first, then the environment, then the current context", () => {
    assert.deepEqual(resolveContext(config, env, "dev"), {
      apiUrl: "http://dev",
      apiKey: "kd",
      source: "context dev",
    });
    assert.deepEqual(resolveContext(config, env, undefined), {
      apiUrl: "http://env",
      apiKey: "ke",
      source: "environment",
    });
    assert.deepEqual(resolveContext(config, {}, undefined), {
      apiUrl: "https://prod",
      apiKey: "kp",
      source: "context prod",
    });
  });

  it("is refused with a message saying what to do when nothing or half is set", () => {
    assert.match(String(resolveContext(config, env, "nope")), /No context named "nope"/);
    assert.match(
      String(resolveContext(config, { HB_API_URL: "http://env" }, undefined)),
      /both HB_API_URL and HB_API_KEY/,
    );
    assert.match(String(resolveContext({ contexts: {} }, {}, undefined)), /hb context add/);
  });
});
