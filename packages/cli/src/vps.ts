import { readFile } from "node:fs/promises";
import type { DataOf, HbClient } from "@hosting-platform/sdk";
import { type Command, Option } from "commander";
import { failIfFailed, waitForJobShown, waitOptions } from "./progress.ts";
import { CliExit, type Runtime } from "./runtime.ts";

type Vps = DataOf<"/vps">[number];
type PowerResult = DataOf<"/vps/{id}/power/{action}", "post">;

const vpsColumns = [
  { header: "ID", value: (v: Vps) => v.id },
  { header: "HOSTNAME", value: (v: Vps) => v.hostname },
  { header: "STATUS", value: (v: Vps) => v.status },
  { header: "STATE", value: (v: Vps) => v.instance?.state },
  { header: "IP", value: (v: Vps) => v.primary_ip },
  { header: "PRODUCT", value: (v: Vps) => v.product.name },
  { header: "NEXT DUE", value: (v: Vps) => v.billing.next_due_date?.slice(0, 10) },
];

/** `--wait` and `--timeout`, on every command that answers a job. */
export function withWait(cmd: Command): Command {
  return cmd
    .option("-w, --wait", "wait for the job to finish, showing its progress; exit 3 if it fails")
    .option("--timeout <seconds>", "with --wait: give up after this long (exit 4)", "600");
}

/** Prints an action's result, or with --wait follows its job and prints the job. */
async function reportJob(
  rt: Runtime,
  cmd: Command,
  hb: HbClient,
  result: { job_id: string },
  opts: { wait?: boolean; timeout: string },
): Promise<void> {
  const print = rt.print(cmd);
  if (!opts.wait) {
    print.record(result);
    if (print.format === "table") print.note(`follow it with: hb jobs wait ${result.job_id}`);
    return;
  }
  const job = await waitForJobShown(rt, hb, result.job_id, waitOptions(opts.timeout));
  print.record(job);
  failIfFailed(job);
}

const POWER = ["start", "stop", "reboot", "shutdown", "poweroff"] as const;

export function registerVps(program: Command, rt: Runtime): void {
  const vps = program.command("vps").description("Virtual servers: list, show, power, reinstall");

  vps
    .command("list")
    .description("every VPS of the account (all pages)")
    .action(async (_opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const rows: Vps[] = [];
      for await (const v of hb.paginate("/vps")) rows.push(v);
      rt.print(cmd).list(rows, vpsColumns);
    });

  vps
    .command("show")
    .description("one VPS with its instance, addresses and capabilities")
    .argument("<id>", "the VPS (service) id")
    .action(async (id: string, _opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.get("/vps/{id}", { params: { path: { id } } });
      rt.print(cmd).record(data);
    });

  for (const action of POWER) {
    withWait(
      vps
        .command(action)
        .description(`${action} a VPS (asynchronous: answers a job)`)
        .argument("<id>", "the VPS (service) id"),
    ).action(async (id: string, opts: { wait?: boolean; timeout: string }, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.post("/vps/{id}/power/{action}", { params: { path: { id, action } } });
      await reportJob(rt, cmd, hb, data as PowerResult, opts);
    });
  }

  withWait(
    vps
      .command("reinstall")
      .description("reinstall the operating system (erases the disk)")
      .argument("<id>", "the VPS (service) id")
      .requiredOption("--image <imageId>", "an image from the VPS's os-images (hb vps images <id>)")
      .addOption(
        new Option("--password-file <path>", "read the new root password from a file ('-' for stdin)"),
      )
      .addOption(new Option("--password <password>", "the new root password (visible in shell history)")),
  ).action(
    async (
      id: string,
      opts: { image: string; password?: string; passwordFile?: string; wait?: boolean; timeout: string },
      cmd: Command,
    ) => {
      const password = opts.passwordFile ? (await readSecret(opts.passwordFile)).trim() : opts.password;
      if (!password) throw new CliExit(2, "reinstall needs --password-file <path> or --password <password>");
      const hb = await rt.client(cmd);
      const { data } = await hb.post("/vps/{id}/reinstall", {
        params: { path: { id } },
        body: { image_id: opts.image, password },
      });
      await reportJob(rt, cmd, hb, data, opts);
    },
  );

  vps
    .command("images")
    .description("the images a reinstall of this VPS accepts")
    .argument("<id>", "the VPS (service) id")
    .action(async (id: string, _opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.get("/vps/{id}/os-images", { params: { path: { id } } });
      rt.print(cmd).record(data);
    });
}

/** A secret from a file or, for "-", from stdin. */
export async function readSecret(file: string): Promise<string> {
  if (file !== "-") return readFile(file, "utf8");
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
