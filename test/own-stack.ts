/**
 * A private stack for tests that change company-wide settings (API switch, hourly limit, modules)
 * or kill processes: they must not disturb the shared stack other test files use concurrently.
 */
import type { ChildProcess } from "node:child_process";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { type Stack, type StackOptions, stackEnv, startStack } from "../scripts/stack.ts";
import { acquireSlots } from "../scripts/stack-slots.ts";
import { contractViolation, onViolation } from "./contract.ts";
import { stackClient } from "./support/clients.ts";
import { removeStackData, testDatabaseUrl, testNamespace } from "./support/test-database.ts";

export interface OwnStack {
  stack: Stack;
  auth: ReturnType<typeof stackClient<[typeof AuthService, typeof AuthStaffService]>>["client"];
  /** An API call to this stack's gateway, its answer checked against the contract like `api()`'s. */
  call(method: string, path: string, key: string, body?: unknown): Promise<OwnAnswer>;
  /**
   * For a failed wait's message: each service's state (running, or how it exited) and its last
   * lines of output, so a stack that did not recover says which process and why.
   */
  diagnosis(lines?: number): string;
  /** The services that have exited (nothing restarts them here). */
  exited(): string[];
  close(): Promise<void>;
}

export interface OwnAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
  body: any;
  text: string;
  headers: Headers;
}

export async function ownStack(
  label: string,
  extraEnv: Record<string, string> = {},
  postgresUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  /** Start a service again when it exits, as `npm start` does (kill tests). */
  opts: Pick<StackOptions, "supervise" | "onRestart" | "dbUrlOf"> = {},
): Promise<OwnStack> {
  // A stack on the run's PostgreSQL counts toward the run's cap (one on a server of its own does not).
  const release = postgresUrl === process.env.DATABASE_URL ? await acquireSlots(1) : () => {};
  const db = testDatabaseUrl(label);
  const server = new URL(postgresUrl);
  db.host = server.host;
  db.username = server.username;
  db.password = server.password;
  // A test that looks for the stack's streams names the namespace (HB_NS); else one of the run's.
  const ns = extraEnv.HB_NS ?? testNamespace();
  const { env, gatewayPort } = await stackEnv({ databaseUrl: db.toString(), ns });
  const stack = await startStack({
    env: { ...env, ...extraEnv },
    output: "pipe",
    gatewayPort,
    supervise: opts.supervise,
    onRestart: opts.onRestart,
    dbUrlOf: opts.dbUrlOf,
  }).catch(async (err: unknown) => {
    await removeStackData(db, ns);
    release();
    throw err;
  });
  const handle = stackClient(env, [AuthService, AuthStaffService], "AUTH_ADDR");
  return {
    stack,
    auth: handle.client,
    call: async (method, path, key, body) => {
      const res = await fetch(`${stack.gatewayUrl}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      const violation = await contractViolation(
        stack.gatewayUrl,
        method,
        `/api/v1${path}`,
        res.status,
        parsed,
      );
      if (violation) onViolation(violation);
      return { status: res.status, body: parsed, text, headers: res.headers };
    },
    diagnosis: (lines = 15) =>
      [...stack.procs]
        .map(([name, p]) => {
          const state = hasExited(p) ? `exited (code ${p.exitCode}, signal ${p.signalCode})` : "running";
          const tail = ((p as { tail?: string[] }).tail ?? [])
            .join("")
            .split("\n")
            .slice(-lines - 1);
          return `--- ${name}: ${state} ---\n${tail.join("\n")}`;
        })
        .join("\n"),
    exited: () => [...stack.procs].filter(([, p]) => hasExited(p)).map(([name]) => name),
    close: async () => {
      handle.close();
      await stack.stop();
      await removeStackData(db, ns);
      release();
    },
  };
}

const hasExited = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null;
