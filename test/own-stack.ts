/**
 * A private stack for tests that change company-wide settings (API switch, hourly limit, modules)
 * or kill processes: they must not disturb the shared stack other test files use concurrently.
 */
import { AuthService } from "@hb/contracts/auth/v1/auth_pb";
import { rpcClient } from "@hb/platform";
import postgres from "postgres";
import { type Stack, stackEnv, startStack } from "../scripts/stack.ts";

export interface OwnStack {
  stack: Stack;
  auth: ReturnType<typeof rpcClient<typeof AuthService>>["client"];
  close(): Promise<void>;
}

export async function ownStack(label: string): Promise<OwnStack> {
  const suffix = `${label}${Date.now().toString(36)}${process.pid.toString(36)}`;
  const db = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  db.pathname = `/hb_test_${suffix}`;
  const ns = `t${suffix}`.toLowerCase().slice(0, 30);
  const { env, gatewayPort } = await stackEnv({ databaseUrl: db.toString(), ns });
  const stack = await startStack({ env, output: "pipe", gatewayPort });
  const handle = rpcClient("grpc-js", AuthService, env.AUTH_ADDR, { timeoutMs: 10_000 });
  return {
    stack,
    auth: handle.client,
    close: async () => {
      handle.close();
      await stack.stop();
      const admin = new URL(db);
      admin.pathname = "/postgres";
      const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
      await sql.unsafe(`drop database if exists "${db.pathname.slice(1)}" with (force)`);
      await sql.end({ timeout: 5 });
    },
  };
}
