/**
 * The slow fault suites (services killed, dependencies taken away), one after the other in one
 * file that starts first and runs beside the rest of the suite (scripts/test-order.ts):
 * - killed services, on one supervised private stack (test/support/fault-stack.ts): webhook
 *   delivery through a crash, the supervisor itself, then every service SIGKILLed under traffic;
 * - PostgreSQL and Redis going away, on a stack with servers of its own;
 * - NATS down at start, then restarted, on one stack with a NATS server of its own
 *   (test/support/nats-fault-stack.ts); the start-up outage runs first, since that stack starts
 *   while its NATS is down.
 */
import { after } from "node:test";
import { closeFaultStack } from "./support/fault-stack.ts";
import { closeNatsFaultStack } from "./support/nats-fault-stack.ts";
import "./webhook-faults.suite.ts";
import "./supervisor.suite.ts";
import "./service-kills.suite.ts";
import "./dependency-faults.suite.ts";
import "./nats-outage-start.suite.ts";
import "./nats-restart.suite.ts";

after(async () => {
  await Promise.all([closeFaultStack(), closeNatsFaultStack()]);
});
