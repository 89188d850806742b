/**
 * The suites that take NATS away, one after the other on one private stack and NATS server
 * (test/support/nats-fault-stack.ts) instead of a stack each. The start-up outage suite runs
 * first: the stack starts while its NATS is down.
 */
import { after } from "node:test";
import { closeNatsFaultStack } from "./support/nats-fault-stack.ts";
import "./nats-outage-start.suite.ts";
import "./nats-restart.suite.ts";

after(closeNatsFaultStack);
