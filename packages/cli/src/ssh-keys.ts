import type { DataOf } from "@hosting-platform/sdk";
import type { Command } from "commander";
import { CliExit, type Runtime } from "./runtime.ts";
import { readSecret } from "./vps.ts";

type SshKey = DataOf<"/ssh-keys">["ssh_keys"][number];

export function registerSshKeys(program: Command, rt: Runtime): void {
  const keys = program.command("ssh-keys").description("Public keys stored on the account");

  keys
    .command("list")
    .description("the stored public keys")
    .action(async (_opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.get("/ssh-keys");
      rt.print(cmd).list<SshKey>(data.ssh_keys, [
        { header: "ID", value: (k) => k.id },
        { header: "NAME", value: (k) => k.name },
        { header: "FINGERPRINT", value: (k) => k.fingerprint },
        { header: "CREATED", value: (k) => k.created_at },
      ]);
    });

  keys
    .command("add")
    .description("store a public key")
    .requiredOption("--name <name>", "a name for the key")
    .option("--file <path>", "the public key file, e.g. ~/.ssh/id_ed25519.pub ('-' for stdin)")
    .option("--key <line>", "the public key line itself")
    .action(async (opts: { name: string; file?: string; key?: string }, cmd: Command) => {
      const publicKey = (opts.file ? await readSecret(opts.file) : (opts.key ?? "")).trim();
      if (!publicKey) throw new CliExit(2, "ssh-keys add needs --file <path> or --key <line>");
      const hb = await rt.client(cmd);
      const { data } = await hb.post("/ssh-keys", { body: { name: opts.name, publicKey } });
      rt.print(cmd).record(data);
    });

  keys
    .command("rm")
    .alias("remove")
    .description("remove a stored key")
    .argument("<id>", "the key id")
    .action(async (id: string, _opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.delete("/ssh-keys/{id}", { params: { path: { id } } });
      rt.print(cmd).record(data);
    });
}
