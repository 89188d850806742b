import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Command } from "commander";
import { completions } from "./completion.ts";
import { buildProgram } from "./program.ts";
import { createRuntime } from "./runtime.ts";

const rt = createRuntime({
  env: { HB_CONFIG: "/nonexistent/hb.json" },
  out: () => {},
  err: () => {},
  errIsTTY: false,
});
const program = buildProgram(rt);
const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
const visible = all(program).filter((c) => c.name() !== "__complete" && c.name() !== "help");

describe("hb's commands", () => {
  it("each have help: a description, and one for every argument and option", () => {
    for (const c of visible) {
      const name = c.parent ? `${c.parent.name()} ${c.name()}` : c.name();
      assert.ok(c.description(), `${name} has no description`);
      for (const a of c.registeredArguments)
        assert.ok(a.description, `${name} <${a.name()}> has no description`);
      for (const o of c.options) assert.ok(o.description, `${name} ${o.flags} has no description`);
    }
  });

  it("offer --wait on every action that answers a job", () => {
    const find = (path: string) =>
      path.split(" ").reduce<Command>((c, n) => c.commands.find((x) => x.name() === n)!, program);
    for (const path of [
      "vps start",
      "vps stop",
      "vps reboot",
      "vps shutdown",
      "vps poweroff",
      "vps reinstall",
      "orders create",
    ]) {
      assert.ok(
        find(path).options.some((o) => o.long === "--wait"),
        `${path} lacks --wait`,
      );
    }
  });
});

describe("completion", () => {
  it("offers subcommands, options and an option's choices for what has been typed", () => {
    assert.deepEqual(completions(program, ["vps", "re"]), ["reboot", "reinstall"]);
    assert.deepEqual(completions(program, ["inv"]), ["invoices"]);
    assert.deepEqual(completions(program, ["vps", "reboot", "--w"]), ["--wait"]);
    assert.ok(completions(program, ["vps", "reboot", "--"]).includes("--output"), "global options too");
    assert.deepEqual(completions(program, ["--output", ""]), ["table", "json"]);
    assert.deepEqual(completions(program, ["orders", "create", "--product", ""]), []);
    assert.ok(!completions(program, [""]).includes("__complete"), "the hidden command is not offered");
  });
});
