/**
 * A private stack with two replicas of every service: two complete sets of processes on their own
 * ports, sharing one database, one Redis namespace and one set of NATS streams, as two pods of
 * each Deployment would. Replica A's gateway calls replica A's backends and B's calls B's, so
 * both replicas of every service take part in every flow, and every background loop (outbox
 * relays, provisioner, hourly charges, webhook passes, consumers) runs twice.
 */
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { WebhooksService } from "@hb/contracts/hb/webhooks/v1/webhooks_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { freePort, SERVICES, STACK_PROCESSES, type Stack, stackEnv, startStack } from "../scripts/stack.ts";
import { acquireSlots } from "../scripts/stack-slots.ts";
import { stackClient } from "./support/clients.ts";
import { removeStackData, testDatabaseUrl, testNamespace } from "./support/test-database.ts";

const authClient = (env: Record<string, string>) =>
  stackClient(env, [AuthService, AuthStaffService], "AUTH_ADDR");
const webhooksClient = (env: Record<string, string>) =>
  stackClient(env, [WebhooksService, WebhooksStaffService], "WEBHOOKS_ADDR");

export interface ReplicaStack {
  replicas: [Stack, Stack];
  /** Both gateways' base URLs, A first. */
  gateways: [string, string];
  auth: ReturnType<typeof authClient>["client"];
  webhooks: ReturnType<typeof webhooksClient>["client"];
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function replicaStack(
  label: string,
  extraEnv: Record<string, string> = {},
): Promise<ReplicaStack> {
  // Two stacks' connections: two of the run's private stack slots (scripts/stack-slots.ts).
  const release = await acquireSlots(2);
  const db = testDatabaseUrl(label);
  const ns = testNamespace();
  // Ten processes on one PostgreSQL shared with other stacks: small pools.
  const common = { DB_POOL_MAX: "2", ...extraEnv };
  const a = await stackEnv({ databaseUrl: db.toString(), ns });
  const envA: Record<string, string> = { ...a.env, ...common };
  // B: the same database, namespace and public URL; its own ports.
  const gatewayPortB = await freePort();
  const envB: Record<string, string> = { ...envA, PORT: String(gatewayPortB) };
  for (const s of SERVICES) envB[s.addrEnv] = `127.0.0.1:${await freePort()}`;
  for (const name of STACK_PROCESSES) envB[`${name.toUpperCase()}_METRICS_PORT`] = String(await freePort());
  for (const s of SERVICES) envB[`${s.name.toUpperCase()}_HEALTH_PORT`] = String(await freePort());

  const replicas: Stack[] = [];
  const drop = async () => {
    await removeStackData(db, ns);
    release();
  };
  try {
    // One after the other: the second set starts against a migrated database, as replicas of a
    // Deployment start after the migration Job.
    replicas.push(await startStack({ env: envA, output: "pipe", gatewayPort: a.gatewayPort }));
    replicas.push(await startStack({ env: envB, output: "pipe", gatewayPort: gatewayPortB }));
  } catch (err) {
    await Promise.all(replicas.map((r) => r.stop()));
    await drop();
    throw err;
  }
  const auth = authClient(envA);
  const webhooks = webhooksClient(envA);
  const [ra, rb] = replicas as [Stack, Stack];
  return {
    replicas: [ra, rb],
    gateways: [ra.gatewayUrl, rb.gatewayUrl],
    auth: auth.client,
    webhooks: webhooks.client,
    env: envA,
    close: async () => {
      auth.close();
      webhooks.close();
      await Promise.all([ra.stop(), rb.stop()]);
      await drop();
    },
  };
}
