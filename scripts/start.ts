/**
 * `npm start`: checks PostgreSQL, Redis and NATS, starts the five services (each migrates its own
 * schema), seeds demo data, prints a working key and curl, and stops everything on Ctrl-C.
 */
import { seedDemo } from "./admin/seed.ts";
import { ensureDependencies } from "./deps.ts";
import { SERVICES, startStack } from "./stack.ts";

const env: Record<string, string> = {
  DATABASE_URL: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/hosting",
  REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
  HB_NS: process.env.HB_NS ?? "hb",
  PORT: process.env.PORT ?? "8080",
  // Development only: `npm run admin -- clock advance` may move billing's clock forward (due dates,
  // end-of-term cancellations, hourly charges); billing keeps the move in its database, so it
  // survives a restart. A test switch: with NODE_ENV=production every service refuses it.
  BILLING_CLOCK_CONTROL: process.env.BILLING_CLOCK_CONTROL ?? "true",
};
env.PUBLIC_URL = process.env.PUBLIC_URL ?? `http://localhost:${env.PORT}`;
const defaults: Record<string, string> = {
  AUTH_ADDR: "127.0.0.1:50051",
  COMPUTE_ADDR: "127.0.0.1:50052",
  BILLING_ADDR: "127.0.0.1:50053",
  WEBHOOKS_ADDR: "127.0.0.1:50054",
};
for (const s of SERVICES) env[s.addrEnv] = process.env[s.addrEnv] ?? defaults[s.addrEnv];
for (const [k, v] of Object.entries(env)) process.env[k] = v;

async function main() {
  let deps: Awaited<ReturnType<typeof ensureDependencies>>;
  try {
    deps = await ensureDependencies({
      DATABASE_URL: env.DATABASE_URL,
      REDIS_URL: env.REDIS_URL,
      NATS_URL: env.NATS_URL,
    });
  } catch (err) {
    process.stderr.write(`Cannot start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  Object.assign(env, deps.urls);
  for (const [k, v] of Object.entries(deps.urls)) process.env[k] = v;

  const stack = await startStack({
    env,
    output: "inherit",
    gatewayPort: Number(env.PORT),
    supervise: true,
    onRestart: (name, exit, delayMs) =>
      process.stderr.write(
        `${name} exited unexpectedly (${exit.signal ?? `code ${exit.code}`}); starting it again in ${delayMs / 1000} s.\n`,
      ),
  });
  const demo = await seedDemo();
  const full = demo.keys[0];
  const revoked = demo.revokedKeys.length
    ? ` Revoked the earlier demo keys (they no longer work):\n${demo.revokedKeys.map((k) => `   ${k.label.padEnd(26)} ${k.display}`).join("\n")}\n`
    : "";
  const vpsDriver =
    process.env.COMPUTE_DRIVER === "lxd"
      ? `lxd (LXD system containers; endpoints ${process.env.LXD_ENDPOINTS ?? "unix:/var/lib/lxd/unix.socket"})`
      : "simulator (set COMPUTE_DRIVER=lxd for real containers: docs/providers.md)";
  process.stdout.write(`
================================================================================
 The platform is running: gateway ${env.PUBLIC_URL}/api/v1
 VPS driver: ${vpsDriver}; dedicated and game servers: simulator
 Demo account:
   customer id                ${demo.customerId}
   owner person id            ${demo.ownerPersonId}
   team member person id      ${demo.memberPersonId}
 Demo keys (shown once; each start and each \`npm run admin -- seed\` revokes the demo keys
 issued before and prints new ones; keys you create yourself are left alone):
${demo.keys.map((k) => `   ${k.label.padEnd(26)} ${k.key}`).join("\n")}
${revoked}
 Sign in (demo passwords; new people set theirs through a one-time link):
${demo.signIns.map((s) => `   ${`${env.PUBLIC_URL}/${s.area}`.padEnd(30)} ${s.email.padEnd(20)} ${s.password.padEnd(22)} ${s.who}`).join("\n")}
 First staff account of a deployment (prints a link to set the password):
   npm run admin -- staff create --name "Ada Admin" --email ada@example.com --permissions view_clients,edit_clients

 Try:
   export API_KEY=${full.key}
   curl -s -H "Authorization: Bearer $API_KEY" ${env.PUBLIC_URL}/api/v1/

 Webhooks on your machine (the demo account is an active reseller partner; a receiver on :3000):
   HB_API_URL=${env.PUBLIC_URL} HB_API_KEY=${demo.reseller.key} \\
   HB_WEBHOOK_SECRET=${demo.reseller.signingSecret} npx hb webhooks listen --forward-to http://localhost:3000/hook

 Admin command (npm run admin -- --help lists all):
   npm run admin -- key create --person ${demo.ownerPersonId} --label ci --scopes services,orders

 Reference: ${env.PUBLIC_URL}/api/v1/docs   Stop: Ctrl-C
================================================================================
`);

  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write("Stopping all services...\n");
    await stack.stop();
    await deps.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown());
  process.on("SIGTERM", () => void shutdown());
}

main().catch((err: unknown) => {
  process.stderr.write(`Start-up failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
