/**
 * The suites that change company-wide settings, one after the other on one private stack
 * (test/support/company-stack.ts) instead of a stack each: a stack's start is most of each
 * suite's time on two shared cores. The order matters: the settings suite checks the defaults
 * first, and the route security suite, which kills compute and leaves the switches off, runs last.
 */
import { after } from "node:test";
import { closeCompanyStack } from "./support/company-stack.ts";
import "./company-settings.suite.ts";
import "./compute-modules.suite.ts";
import "./route-security.suite.ts";

after(closeCompanyStack);
